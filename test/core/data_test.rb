require_relative "../assert"

Measure = Data.define(:amount, :unit) do
  def to_s_short = "#{amount}#{unit}"
end

Area = Data.define(:width, :height, :area) do
  def initialize(width:, height:)
    super(width: width, height: height, area: width * height)
  end
end

test "define and construct" do
  assert_equal [:amount, :unit], Measure.members
  m = Measure.new(1, "km")
  assert_equal [1, "km"], [m.amount, m.unit]
  assert_equal m, Measure.new(amount: 1, unit: "km")
  assert_equal m, Measure[1, "km"]
  assert_equal m, Measure[amount: 1, unit: "km"]
  assert_equal m, Measure.new("amount" => 1, "unit" => "km")
  assert_equal "1km", m.to_s_short
  assert_true m.frozen?
  assert_equal [], Data.define.members
  assert_true Data.define.new.frozen?
  assert_equal [:a, :b], Data.define("a", :b).members
end

test "argument errors" do
  assert_raise(ArgumentError, "missing keyword: :unit") { Measure.new(1) }
  assert_raise(ArgumentError, "missing keywords: :amount, :unit") { Measure.new }
  assert_raise(ArgumentError, "wrong number of arguments (given 3, expected 0..2)") { Measure.new(1, 2, 3) }
  assert_raise(ArgumentError, "unknown keyword: :system") { Measure.new(amount: 1, unit: "km", system: "metric") }
  assert_raise(ArgumentError, "duplicate member: a") { Data.define(:a, :a) }
  assert_raise(ArgumentError, "invalid data member: a=") { Data.define(:a=) }
  assert_raise(TypeError, "1 is not a symbol nor a string") { Data.define(1) }
  assert_raise(NoMethodError) { Data.new }
  assert_raise(NoMethodError) { Measure.new(1, "km").instance_eval { self.amount = 2 } }
end

test "custom initialize with keyword defaults" do
  a = Area.new(width: 2, height: 3)
  assert_equal 6, a.area
  assert_equal 6, Area.new(2, 3).area
end

test "immutability" do
  m = Measure.new(1, "km")
  assert_raise(FrozenError) { m.instance_variable_set(:@x, 1) }
  assert_true m.dup.frozen?
end

test "with, to_h, equality, hash" do
  m = Measure.new(1, "km")
  assert_same m, m.with
  n = m.with(unit: "m")
  assert_equal [1, "m"], [n.amount, n.unit]
  assert_equal "km", m.unit
  assert_raise(ArgumentError, "wrong number of arguments (given 1, expected 0)") { m.with(1) }
  assert_equal({amount: 1, unit: "km"}, m.to_h)
  assert_equal({"amount" => 2}, Data.define(:amount).new(1).to_h { |k, v| [k.to_s, v + 1] })
  assert_true m == Measure.new(1.0, "km")
  assert_false m.eql?(Measure.new(1.0, "km"))
  assert_equal m.hash, Measure.new(1, "km").hash
  other = Data.define(:amount, :unit)
  assert_false m == other.new(1, "km")
end

test "inspect" do
  assert_equal '#<data Measure amount=1, unit="km">', Measure.new(1, "km").inspect
  assert_equal "#<data x=1>", Data.define(:x).new(1).to_s
end

test "pattern matching and deconstruct" do
  m = Measure.new(1, "km")
  r = case m
      in {amount:, unit: "km"} then amount
      end
  assert_equal 1, r
  assert_equal [1, "km"], m.deconstruct
  assert_equal({amount: 1}, m.deconstruct_keys([:amount]))
  assert_equal({amount: 1, unit: "km"}, m.deconstruct_keys(nil))
  assert_raise(TypeError, "0 is not a symbol nor a string") { m.deconstruct_keys([0]) }
  assert_raise(TypeError, /expected Array or nil/) { m.deconstruct_keys(:x) }
end
