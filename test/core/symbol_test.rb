require_relative "../assert"

test "inspect" do
  assert_equal ":\"foo bar\"", :"foo bar".inspect
  assert_equal ":\"9a\"", :"9a".inspect
  assert_equal ":a?", :a?.inspect
  assert_equal Encoding::US_ASCII, (:a?.inspect).encoding
  assert_equal ":a!", :a!.inspect
  assert_equal Encoding::US_ASCII, (:a!.inspect).encoding
  assert_equal ":a=", :a=.inspect
  assert_equal Encoding::US_ASCII, (:a=.inspect).encoding
  assert_equal ":[]=", :[]=.inspect
  assert_equal Encoding::US_ASCII, (:[]=.inspect).encoding
  assert_equal ":[]", :[].inspect
  assert_equal Encoding::US_ASCII, (:[].inspect).encoding
  assert_equal ":\"a?=\"", :"a?=".inspect
  assert_equal ":A=", :A=.inspect
  assert_equal Encoding::US_ASCII, (:A=.inspect).encoding
  assert_equal ":\"@1\"", :"@1".inspect
  assert_equal ":@a", :@a.inspect
  assert_equal Encoding::US_ASCII, (:@a.inspect).encoding
  assert_equal ":@@a", :@@a.inspect
  assert_equal Encoding::US_ASCII, (:@@a.inspect).encoding
  assert_equal ":\"@@1\"", :"@@1".inspect
  assert_equal ":$a", :$a.inspect
  assert_equal Encoding::US_ASCII, (:$a.inspect).encoding
  assert_equal ":\"$%\"", :"$%".inspect
  assert_equal ":$~", :$~.inspect
  assert_equal Encoding::US_ASCII, (:$~.inspect).encoding
  assert_equal ":$1", :$1.inspect
  assert_equal Encoding::US_ASCII, (:$1.inspect).encoding
  assert_equal ":$123", :$123.inspect
  assert_equal Encoding::US_ASCII, (:$123.inspect).encoding
  assert_equal ":$-w", :"$-w".inspect
  assert_equal Encoding::US_ASCII, (:"$-w".inspect).encoding
  assert_equal ":\"$-ww\"", :"$-ww".inspect
  assert_equal ":\"$\"", :"$".inspect
  assert_equal ":\"\"", :"".inspect
  assert_equal ":\"=\"", :"=".inspect
  assert_equal ":==", :==.inspect
  assert_equal Encoding::US_ASCII, (:==.inspect).encoding
  assert_equal ":\"&&\"", :"&&".inspect
  assert_equal ":!=", :!=.inspect
  assert_equal Encoding::US_ASCII, (:!=.inspect).encoding
  assert_equal ":!", :!.inspect
  assert_equal Encoding::US_ASCII, (:!.inspect).encoding
  assert_equal ":!~", :!~.inspect
  assert_equal Encoding::US_ASCII, (:!~.inspect).encoding
  assert_equal ":**", :**.inspect
  assert_equal Encoding::US_ASCII, (:**.inspect).encoding
  assert_equal ":+@", :+@.inspect
  assert_equal Encoding::US_ASCII, (:+@.inspect).encoding
  assert_equal ":\"~@\"", :"~@".inspect
  assert_equal ":\"!@\"", :"!@".inspect
  assert_equal ":é", :"é".inspect
  assert_equal ":\"a\\nb\"", :"a\nb".inspect
  assert_equal ":_", :_.inspect
  assert_equal Encoding::US_ASCII, (:_.inspect).encoding
  assert_equal ":Foo", :Foo.inspect
  assert_equal Encoding::US_ASCII, (:Foo.inspect).encoding
  assert_equal ":foo_bar?", :foo_bar?.inspect
  assert_equal Encoding::US_ASCII, (:foo_bar?.inspect).encoding
  assert_equal ":\"?\"", :"?".inspect
  assert_equal ":\"a-b\"", :"a-b".inspect
  assert_equal ":<=>", :<=>.inspect
  assert_equal Encoding::US_ASCII, (:<=>.inspect).encoding
  assert_equal ":`", :`.inspect
  assert_equal Encoding::US_ASCII, (:`.inspect).encoding
  assert_equal ":\"||\"", :"||".inspect
  assert_equal ":$0", :$0.inspect
  assert_equal Encoding::US_ASCII, (:$0.inspect).encoding
  assert_equal ":\"$-\"", :"$-".inspect
  assert_equal ":\"@\"", :"@".inspect
  assert_equal ":nil", :nil.inspect
  assert_equal Encoding::US_ASCII, (:nil.inspect).encoding
  assert_equal ":\"a=b\"", :"a=b".inspect
  assert_equal ":$\"", :"$\"".inspect
  assert_equal Encoding::US_ASCII, (:"$\"".inspect).encoding
  assert_equal ":\"@a?\"", :"@a?".inspect
  assert_equal ":\"$a=\"", :"$a=".inspect
  assert_equal ":\"[]?\"", :"[]?".inspect
  assert_equal ":\"a\\\"b\"", :"a\"b".inspect
  assert_equal "[:a, :b]", %i[a b].inspect
end

test "conversions" do
  assert_equal "abc", :abc.to_s
  assert_equal Encoding::US_ASCII, (:abc.to_s).encoding
  assert_equal "abc", :abc.id2name
  assert_equal Encoding::US_ASCII, (:abc.id2name).encoding
  assert_equal "abc", :abc.name
  assert_equal Encoding::US_ASCII, (:abc.name).encoding
  assert_equal true, :abc.name.frozen?
  assert_equal true, :abc.name.equal?(:abc.name)
  assert_equal :abc, :abc.to_sym
  assert_equal NoMethodError, :abc.to_proc.call("x") rescue $!.class
  assert_equal "ABC", :upcase.to_proc.call("abc")
  assert_equal 3, :+.to_proc.call(1, 2)
  assert_equal true, :upcase.to_proc.lambda?
  assert_equal -2, :upcase.to_proc.arity
  assert_equal ["1", "2", "3"], [1, 2, 3].map(&:to_s)
  assert_equal "no receiver given", :abc.to_proc.call rescue $!.message
  assert_equal true, "abc".to_sym.equal?(:abc)
end

test "comparison" do
  assert_equal -1, :a <=> :b
  assert_equal 1, :b <=> :a
  assert_equal 0, :a <=> :a
  assert_equal nil, :a <=> "a"
  assert_equal true, :a == :a
  assert_equal false, :a == "a"
  assert_equal true, :a === :a
  assert_equal 0, :abc.casecmp(:ABC)
  assert_equal -1, :abc.casecmp(:abd)
  assert_equal nil, :abc.casecmp("abc")
  assert_equal true, :abc.casecmp?(:ABC)
  assert_equal nil, :abc.casecmp?("abc")
  assert_equal true, :"é".casecmp?(:"É")
  assert_equal [:a, :b, :c], [:c, :a, :b].sort
  assert_equal true, :a.hash == :a.hash
  assert_equal true, :a.between?(:a, :c)
  assert_equal :c, :b.clamp(:c, :d)
end

test "string-like" do
  assert_equal 5, :hello.length
  assert_equal 5, :hello.size
  assert_equal 2, :"日本".length
  assert_equal :HELLO, :hello.upcase
  assert_equal :hello, :Hello.downcase
  assert_equal :Hello, :hello.capitalize
  assert_equal :hELLO, :Hello.swapcase
  assert_equal Symbol, :hello.upcase.class
  assert_equal "h", :hello[0]
  assert_equal Encoding::US_ASCII, (:hello[0]).encoding
  assert_equal "ell", :hello[1, 3]
  assert_equal Encoding::US_ASCII, (:hello[1, 3]).encoding
  assert_equal "ello", :hello[1..]
  assert_equal Encoding::US_ASCII, (:hello[1..]).encoding
  assert_equal "ll", :hello[/l+/]
  assert_equal Encoding::US_ASCII, (:hello[/l+/]).encoding
  assert_equal "he", :hello.slice(0, 2)
  assert_equal Encoding::US_ASCII, (:hello.slice(0, 2)).encoding
  assert_equal :b, :a.succ
  assert_equal :ba, :az.next
  assert_equal true, :hello.start_with?("he")
  assert_equal true, :hello.start_with?("x", "h")
  assert_equal true, :hello.end_with?("lo")
  assert_equal 2, :hello =~ /ll/
  assert_equal "l", :hello.match(/l(l)/)[1]
  assert_equal Encoding::US_ASCII, (:hello.match(/l(l)/)[1]).encoding
  assert_equal false, :hello.match?(/z/)
  assert_equal true, :"".empty?
  assert_equal false, :a.empty?
  assert_equal "#<Encoding:US-ASCII>", (:abc.encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (:"é".encoding).inspect
  assert_equal true, :abc.frozen?
  assert_equal false, :a.to_s.frozen?
  assert_equal true, :a.dup.equal?(:a)
  assert_equal true, :a.clone.equal?(:a)
  assert_equal true, Symbol.all_symbols.include?(:abc)
  assert_equal true, Symbol.all_symbols.size > 100
  assert_equal true, :a.instance_of?(Symbol)
  assert_equal :AB, :ab.upcase(:ascii)
end


class ProcVisibility
  def pub = :pub

  protected def pro = :pro

  def via_tap = tap(&:pro)
end

test "Symbol procs call public methods only; start_with? and captures" do
  o = ProcVisibility.new
  assert_equal :pub, :pub.to_proc.call(o)
  assert_raise(NoMethodError, /protected method 'pro' called/) { o.via_tap }
  assert_equal true, :"test-1337".start_with?(/test-(\d+)/)
  assert_equal "1337", $1
  assert_equal false, :"test-asdf".start_with?(/test-(\d+)/)
  assert_equal nil, $~
  assert_equal nil, :symbol[/(sy)(mb)(ol)/, -4]
  assert_equal "sy", :symbol[/(sy)(mb)(ol)/, -3]
  assert_equal nil, "symbol"[/(sy)(mb)(ol)/, 4]
end
