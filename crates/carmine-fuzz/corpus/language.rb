# Seed corpus of the panic-freedom check: a dense tour of Ruby syntax, so that mutations
# of it reach many parser and compiler paths. Every section rescues what it raises; the
# file must run to the end on Carmine and on CRuby.

def section(name)
  yield
rescue Exception => e
  raise if e.is_a?(SystemExit)
  [name, e.class]
end

section(:methods) do
  def opt(a, b = a + 1, *rest, c, d:, e: 2, **kw, &blk)
    [a, b, rest, c, d, e, kw, blk&.call]
  end
  opt(1, 2, d: 3)
  opt(1, 2, 3, 4, 5, d: 6, z: 7) { 8 }
  def endless(x) = x * 2
  endless(21)
  def fwd(...) = opt(...)
  fwd(1, 2, d: 3)
  def anon_splat(*, **, &) = opt(*, d: 1, **, &)
  anon_splat(1, 2)
  define_method(:dm) { |x = 1, *y, z: 3| [x, y, z] }
  dm(1, 2, z: 4)
  send(:opt, 1, 2, d: 3)
  method(:endless).to_proc.(2)
end

section(:blocks) do
  [1, 2, 3].each_with_index.map { |x, i| x * i }
  [[1, [2, 3]]].each { |a, (b, c)| a + b + c }
  [1, 2].map { it * 2 }
  [1, 2].map { _1 + 1 }
  l = ->(a, b = 2, *c, d:, &e) { [a, b, c, d] }
  l.(1, d: 2)
  l.curry rescue nil
  pr = proc { |a, b| [a, b] }
  pr.call([1, 2])
  pr.(1)
  pr.lambda?
  counter = 0
  loop do
    counter += 1
    next if counter.odd?
    break counter if counter > 5
  end
  1.step(10, 3) { |i| i }
  catch(:done) { 10.times { |i| throw :done, i if i == 3 } }
  def yielder
    yield 1, 2
    yield [3, 4]
    block_given?
  end
  yielder { |a, b| a }
end

section(:control) do
  x = 0
  x += 1 while x < 10
  x -= 1 until x.zero?
  for a, b in [[1, 2], [3, 4]]
    x += a * b
  end
  begin
    raise ArgumentError, "bad"
  rescue TypeError, ArgumentError => e
    e.message
  else
    :else
  ensure
    x += 1
  end
  tries = 0
  begin
    tries += 1
    raise "again" if tries < 3
  rescue
    retry
  end
  r = if x > 3 then :big elsif x > 1 then :mid else :small end
  r = x > 3 ? :a : :b
  r = (x > 1 and x < 100) || (not x.nil?)
  r = case x
      when 0 then :zero
      when 1..10, 20 then :small
      when Integer then :int
      else :other
      end
  (1..10).each { |i| break if (i == 3)..(i == 5) }
  __method__
  defined?(foo)
  defined?(String)
  defined?(@iv)
  defined?(yield)
  defined?(super)
end

section(:patterns) do
  config = { name: "x", roles: [:admin, :dev], meta: { depth: 2 } }
  case config
  in { name: String => name, roles: [*, :admin, *], meta: { depth: Integer => d } } if d > 1
    [name, d]
  in { name: }
    name
  end
  case [1, [2, 3]]
  in [Integer => a, [b, *c]] then a + b
  end
  case 5
  in 0..3 | 10.. then :no
  in ^config then :no
  in Integer | Float => n then n
  end
  config => { name: }
  1 in Integer
  case { a: nil }
  in { a: nil, **nil } then :exact
  end
  Point = Struct.new(:x, :y)
  case Point.new(1, 2)
  in [x, y] then x + y
  in { x:, y: } then x * y
  end
end

section(:strings) do
  name = "world"
  s = "hello #{name} #{1 + 2} #@iv #$0"
  s = 'single \' quoted'
  s = %q(paren (nested) quoted) + %Q{interp #{name}} + %w[a b c].join + %i[x y].inspect
  s = <<~EOS
    squiggly #{name}
      indented
  EOS
  s = <<-'RAW'
    raw #{not}
  RAW
  s = "a" "b" 'c'
  s = ?a + ?\n
  s = "\u00e9\u{1F600}\x41\101\e\s\C-a\M-a"
  s = :"dyn#{name}sym"
  s = /re(?<word>\w+)#{name}/ix =~ "reworld"
  $~ && $~[:word]
  s = "%05.2f|%-5s|%+d|%x|%o|%e|%b" % [3.14159, "ab", 5, 255, 8, 12345.678, 5]
  s = format("%s and %p", "str", :sym)
  "abc".encoding
  "abc".force_encoding("ASCII-8BIT").valid_encoding?
end

section(:numbers) do
  [1_000_000, 0x1f, 0b1010, 0o17, 017, 1e10, 1.5e-3, 3r, 2i, 1.5r, 3ri]
  2**64 + 1
  -(2**100) / 7
  (2**64).to_s(36)
  10.divmod(-3)
  -7 % 3
  1.0 / 0
  0.1 + 0.2
  Integer("0x1f", 16) rescue nil
  Float("1e3")
  Rational(3, 6) + Complex(1, 2)
  12345678901234567890 * 98765432109876543210
  1 <=> 2.0
  5.clamp(1, 3)
  255.digits(16)
  4.2.floor(-1)
end

section(:collections) do
  a = [3, 1, 2]
  a.sort!.reverse.push(4) << 5
  a[1..] + a[..1] + a[1, 2] + a.values_at(0, -1)
  first, *rest = a
  *init, last = a
  x, (y, z), w = 1, [2, 3], 4
  a, b = b, a
  h = { a: 1, "b" => 2, 3 => [4], nil => nil }
  h.transform_values { |v| v.to_s }.select { |k, v| k }.to_a.flatten(1)
  h => { a: }
  h.each_pair.with_index.map { |(k, v), i| [k, v, i] }
  { **h, c: 3 }
  [*a, *nil, *[1]]
  (1..Float::INFINITY).lazy.map { |i| i * 2 }.first(3)
  ("a".."e").step(2).to_a
  a.each_slice(2).zip(a.each_cons(2))
  a.group_by(&:odd?).sum { |k, v| v.size }
  a.tally.max_by { |k, v| v }
  a.inject(:+)
  a.frozen?
  [1, [2, [3, [4]]]].flatten
  Hash.new { |hash, k| hash[k] = k * 2 }[5]
end

section(:classes) do
  module Greet
    def greet = "hi #{name}"
  end
  class Animal
    include Comparable
    include Greet
    attr_accessor :name
    @@count = 0
    COLORS = %w[red].freeze
    def initialize(name) = (@name = name; @@count += 1)
    def <=>(o) = name <=> o.name
    def to_s = "#<#{self.class.name} #{@name}>"
    def method_missing(m, *a) = m.to_s.start_with?("say_") ? m.to_s[4..] : super
    def respond_to_missing?(m, p = false) = m.to_s.start_with?("say_") || super
    class << self
      def count = @@count
    end
    protected def secret = 42
    private
    def hidden = 1
  end
  class Dog < Animal
    def initialize(name, breed)
      super(name)
      @breed = breed
    end
    def to_s = super + "(#{@breed})"
    alias_method :inspect, :to_s
  end
  d = Dog.new("rex", "lab")
  d.say_woof
  d.greet
  [Dog.new("b", 1), Dog.new("a", 2)].min
  Dog.ancestors.include?(Greet)
  d.instance_variables
  d.instance_variable_get(:@breed)
  d.singleton_class.define_method(:only_me) { 1 }
  d.only_me
  Dog.instance_method(:to_s).bind(d).call
  o = Object.new
  def o.special = :yes
  o.special
  Class.new(StandardError) { def message = "custom" }.new.message
  Module.new.module_eval { def self.x = 1 }
  Comparable.instance_methods.sort.first
  d.frozen?
  d.dup.name
  Animal.count
  ObjectSpace.respond_to?(:each_object)
end

section(:refinements_and_misc) do
  BEGIN_VALUE = __LINE__
  x = [__FILE__, __dir__, __ENCODING__]
  $global_var = 1
  $global_var += 1
  alias $other_global $global_var
  @iv ||= 5
  @iv &&= @iv + 1
  h = {}
  h[:k] ||= []
  h[:k] << 1
  a = nil
  a&.length
  a.to_a
  obj = Object.new
  obj.instance_eval { @secret = 1 }
  obj.instance_exec(2) { |v| @secret + v }
  eval("1 + 1")
  binding.local_variable_get(:x)
  ObjectSpace::WeakMap.new rescue nil
  GC.start
  at_exit { nil }
end
