require_relative "../assert"

# $! is restored when a rescue clause is left, however it is left.

def errinfo_test_return_from_rescue
  begin
    raise StandardError, "inner"
  rescue
    return :returned
  end
end

def errinfo_test_return_from_block_rescue
  [1].each do
    begin
      raise "err"
    rescue
      return 1
    end
  end
end

test "return from a rescue clause restores the outer $!" do
  begin
    raise StandardError, "outer"
  rescue => outer
    errinfo_test_return_from_rescue
    assert_same outer, $!
  end
  assert_nil $!
end

test "a non-local return from a rescue in a block clears $!" do
  errinfo_test_return_from_block_rescue
  assert_nil $!
end

test "next out of a rescue clause in a loop clears $!" do
  x = 0
  while x < 2
    x += 1
    begin
      raise "in loop"
    rescue
      next
    end
  end
  assert_nil $!
end

test "$@ sets the backtrace of the handled exception" do
  begin
    raise "x"
  rescue
    $@ = ["here"]
    assert_equal ["here"], $!.backtrace
  end
  assert_raise(ArgumentError, "$! not set") { $@ = [] }
end

test "an exception raised from a rescue clause is $! in enclosing ensures" do
  e = StandardError.new("foo")
  seen = []
  begin
    begin
      begin
        raise e
      rescue => e
        raise e
      ensure
        seen << $!
      end
    ensure
      seen << $!
    end
  rescue
    seen << $!
  end
  assert_equal [e, e, e], seen
  assert_nil $!
end

test "an ensure clause run by an exception sees it as $!" do
  outer = StandardError.new("outer")
  inner = StandardError.new("inner")
  seen = []
  begin
    begin
      raise outer
    ensure
      seen << $!
      begin
        raise inner
      rescue
        seen << $!
      ensure
        seen << $!
      end
      seen << $!
    end
  rescue
    seen << $!
  end
  assert_equal [outer, inner, outer, outer, outer], seen
end
