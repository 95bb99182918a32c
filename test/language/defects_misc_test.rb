require_relative "../assert"

class MergeHash < Hash
  attr_accessor :tag
end

test "Hash#merge on a subclass keeps the class and the instance variables" do
  h = MergeHash.new
  h.tag = 1
  h[:a] = 1
  m = h.merge(b: 2)
  assert_equal [MergeHash, 1, { a: 1, b: 2 }], [m.class, m.tag, m]
end

module DupMod
  def self.hi = :hi
  X = 1
end

test "Module#dup and #clone keep singleton methods" do
  d = DupMod.dup
  assert_equal [:hi, 1, [:hi]], [d.hi, d::X, d.singleton_methods]
  assert_equal :hi, DupMod.clone.hi
end

class FrozenCvarBase; @@x = 1; end
class FrozenCvarSub < FrozenCvarBase
  def self.set = (@@x = 2)
end

test "writing a frozen class's class variable through a subclass raises FrozenError" do
  FrozenCvarBase.freeze
  assert_raise(FrozenError) { FrozenCvarSub.set }
end

class RmBase; def m = :base; end
class RmSub < RmBase; def m = :sub; end

test "remove_method after undef_method raises NameError and the method stays undefined" do
  RmSub.send(:undef_method, :m)
  assert_raise(NameError) { RmSub.send(:remove_method, :m) }
  assert_raise(NoMethodError) { RmSub.new.m }
end

test "nil === x and true === x use a redefined ==" do
  out, err, _ = run_carmine(<<~'RUBY')
    class NilClass; def ==(o) = o == :nilish; end
    class TrueClass; def ==(o) = o == :yes; end
    p nil === :nilish, true === :yes, false === :no
    case :nilish when nil then p :matched end
  RUBY
  assert_equal "true\ntrue\nfalse\n:matched\n", out, err
end

IeX = 0
class IeFoo; IeX = 1; end
module IeMod
  IeX = 3
  def self.go
    o = IeFoo.new
    a = o.instance_eval("IeX")
    o2 = IeFoo.new
    o2.singleton_class
    [a, o2.instance_eval("IeX"), IeFoo.instance_eval("IeX"), IeFoo.new.instance_eval("Module.nesting")]
  end
end

test "instance_eval(string) resolves constants in the receiver's class, or its singleton class" do
  assert_equal [1, 3, 3, [IeFoo, IeMod]], IeMod.go
  o = IeFoo.new
  o.instance_eval("def ie_single = 1")
  assert_equal [:ie_single], o.singleton_methods
  assert_raise(TypeError) { 5.instance_eval("def x; end") }
end

test "a second thread requiring a file being loaded waits until it is loaded" do
  dir = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_require_#{Process.pid}"
  Dir.mkdir(dir) unless File.directory?(dir)
  File.write("#{dir}/slow_feature.rb", "$slow_loads = ($slow_loads || 0) + 1; sleep 0.2; SLOW_FEATURE = 1\n")
  $LOAD_PATH.unshift dir
  t1 = Thread.new { require "slow_feature" }
  Thread.pass until $slow_loads
  t2 = Thread.new { [require("slow_feature"), defined?(SLOW_FEATURE)] }
  assert_true t1.value
  assert_equal [false, "constant"], t2.value
  assert_equal 1, $slow_loads
  $LOAD_PATH.delete(dir)
  File.delete("#{dir}/slow_feature.rb")
  Dir.rmdir(dir)
end

test "--enable-frozen-string-literal freezes literals without a magic comment" do
  out, _err, _ = run_carmine("p 'a'.frozen?, eval('%(b)').frozen?", "--enable-frozen-string-literal")
  assert_equal "true\ntrue\n", out
  out, _err, _ = run_carmine("# frozen_string_literal: false\np 'a'.frozen?", "--enable-frozen-string-literal")
  assert_equal "false\n", out
end

def iterator_q = iterator?

test "Kernel#iterator? is block_given?" do
  assert_equal [false, true], [iterator_q, iterator_q {}]
end

test "autoload of a file that opens the class or module" do
  dir = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_autoload_#{Process.pid}"
  Dir.mkdir(dir) unless File.directory?(dir)
  File.write("#{dir}/al_class.rb", "class AlClass; def hi = :hi; end\n")
  File.write("#{dir}/al_mod.rb", "module AlMod; X = 1; end\n")
  autoload :AlClass, "#{dir}/al_class.rb"
  autoload :AlMod, "#{dir}/al_mod.rb"
  assert_equal :hi, AlClass.new.hi
  assert_equal 1, AlMod::X
  File.delete("#{dir}/al_class.rb", "#{dir}/al_mod.rb")
  Dir.rmdir(dir)
end

test "trace_var runs its commands after each assignment; untrace_var removes them" do
  seen = []
  trace_var(:$traced_g) { |v| seen << [:block, v] }
  cmd = proc { |v| seen << [:proc, v] }
  trace_var(:$traced_g, cmd)
  $traced_g = 1
  assert_equal [[:proc, 1], [:block, 1]], seen
  assert_equal [cmd], untrace_var(:$traced_g, cmd)
  $traced_g = 2
  assert_equal [[:proc, 1], [:block, 1], [:block, 2]], seen
  assert_equal 1, untrace_var(:$traced_g).size
  $traced_g = 3
  assert_equal 3, seen.size
  assert_raise(NameError) { untrace_var(:$never_defined_global) }
end
