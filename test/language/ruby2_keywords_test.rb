require_relative "../assert"

class R2K
  def target(*args, **kw) = [args, kw]
  ruby2_keywords def via_splat(*args) = target(*args)
  def plain(*args) = target(*args)
  ruby2_keywords def last_flagged?(*args) = Hash.ruby2_keywords_hash?(args.last)
  def via_yield(*args) = yield(*args)
  ruby2_keywords :via_yield
end

class R2KChild < R2K
  ruby2_keywords def target_zsuper(*args) = super
  ruby2_keywords def via_super(*args) = super(*args)
end

class R2K
  def target_zsuper(*args, **kw) = [args, kw]
  def via_super(*args, **kw) = [args, kw]
end

test "a ruby2_keywords method passes keywords on through *args" do
  o = R2K.new
  assert_equal [[1], { a: 1 }], o.via_splat(1, a: 1)
  assert_equal [[1, { a: 1 }], {}], o.plain(1, a: 1)
  assert_true o.last_flagged?(a: 1)
  assert_false o.last_flagged?({ a: 1 })
  assert_equal [[], { a: 1 }], o.via_yield(a: 1) { |*a, **k| [a, k] }
end

test "super and zsuper pass a flagged hash as keywords" do
  o = R2KChild.new
  assert_equal [[], { a: 1 }], o.via_super(a: 1)
  assert_equal [[], { a: 1 }], o.target_zsuper(a: 1)
end

test "Proc#ruby2_keywords and define_method" do
  pr = proc { |*a| R2K.new.target(*a) }.ruby2_keywords
  assert_equal [[], { b: 2 }], pr.call(b: 2)
  klass = Class.new do
    define_method(:dm) { |*a| R2K.new.target(*a) }
    ruby2_keywords :dm
  end
  assert_equal [[], { c: 3 }], klass.new.dm(c: 3)
end

test "ruby2_keywords skips methods with keywords or without a splat, and needs a defined method" do
  klass = Class.new do
    def with_kw(*a, k: 1) = a
  end
  _out, err, = run_carmine("class C; def m(a) = a; ruby2_keywords :m; end")
  assert_match(/Skipping set of ruby2_keywords flag for m/, err)
  assert_raise(NameError) { klass.send(:ruby2_keywords, :nope) }
end
