# Seed corpus of the panic-freedom check: builtin methods of the core classes called with
# arguments of every kind (other types, edge numbers, odd strings, objects with hostile
# conversions), with and without blocks. Every call rescues what it raises; only a crash
# fails. The calls are chosen by a seeded PRNG: mutations of SEED, ROUNDS and the tables
# below give other sequences. Run alone: `carmine builtins.rb [seed] [rounds]`.

SEED = (ARGV[0] || 20261122).to_i
ROUNDS = (ARGV[1] || 4000).to_i
TRACE = ENV["CARMINE_FUZZ_TRACE"] == "1"

def hostile(kind)
  o = Object.new
  case kind
  when 0 then def o.to_int = 2**70
  when 1 then def o.to_str = nil
  when 2 then def o.to_ary = [self]
  when 3 then def o.to_s = raise("to_s")
  when 4 then def o.coerce(x) = [x, x]
  when 5 then def o.each = yield(self)
  when 6 then def o.<=>(x) = nil
  when 7 then def o.hash = 2**80
  when 8 then def o.method_missing(*) = self
  when 9 then def o.to_int = -1
  when 10 then def o.to_str = "\xff".b
  when 11 then def o.to_hash = { self => self }
  when 12 then def o.to_proc = proc { |*a| a }
  when 13 then def o.==(x) = raise(StopIteration)
  when 14 then def o.to_ary = nil
  when 15 then def o.to_int = 2**31
  end
  o
end

def values
  [
    nil, true, false, 0, 1, -1, 2, 3, 7, 64, 255, 256, 2**31, -(2**31), 2**32, 2**62 - 1, 2**62, -(2**62),
    2**63, 2**64, -(2**64), 10**30, 0.0, -0.0, 0.5, 1.5, -2.5, 1e308, 1e-308, Float::NAN, Float::INFINITY,
    -Float::INFINITY, Float::EPSILON, 1r, 3/7r, -1r, 1i, Complex(1.5, -2), "", "a", "abc", "Hello World",
    "\xff\xfe".b, "\u3042\u3044", "a\0b", "%s%d%*s%-+05.3f%c%p%<a>s%{b}", "*", "C*", "U*", "w", "m0", "\\", "/",
    "a".encode("UTF-16LE"), "ab".force_encoding("UTF-32BE"), "x" * 1000, :a, :"", :"foo=", :<=>, :each,
    [], [nil], [1, 2, 3], [3, 1, 2], ["a", "b"], [[1, 2], [3, 4]], [1, [2, [3, [4]]]], [0.5, 1r, 2**64],
    {}, { a: 1 }, { 1 => 2, "x" => [3] }, Hash.new(5), Hash.new { |h, k| h[k] = k },
    1..3, 1...1, 3..1, (1..), (..1), "a".."e", 1.0..2.0, (2**64)..(2**64 + 2), nil..nil,
    Object.new, BasicObject.new, Class.new, Module.new, Comparable, Kernel, Integer, String, Array,
    Struct.new(:a, :b).new(1, 2), method(:puts), proc { |*a| a }, ->(x) { x }, ->(*) { }, :to_s.to_proc,
    /a(b)?c/, //, /(?<n>x)\k<n>/, Encoding::UTF_8, Encoding::BINARY, Encoding::UTF_16LE,
    [1, 2].each, (1.step(10, 3) rescue nil), ((1..Float::INFINITY).lazy rescue nil), (Time.at(0) rescue nil), (Time.at(2**40, 5, :nsec) rescue nil),
    Random.new(1), $stdout, (Thread.current rescue nil), (Fiber.new { Fiber.yield 1 } rescue nil), ObjectSpace, GC, Math,
    hostile(0), hostile(1), hostile(2), hostile(3), hostile(4), hostile(5), hostile(6), hostile(7),
    hostile(8), hostile(9), hostile(10), hostile(11), hostile(12), hostile(13), hostile(14), hostile(15),
  ]
end

# Methods that would end the run, wait, read stdin, touch the process or the file system
# outside the scratch directory, or change the classes the rest of the run calls.
SKIP = %i[
  exit exit! abort fork exec system spawn sleep loop trap syscall ` gets readline readlines
  getc getbyte readchar readbyte readpartial read_nonblock sysread read pread wait wait_readable
  wait_writable select pause kill daemon setsid setpgid setrlimit chroot exit_value
  require require_relative load autoload at_exit set_trace_func trace_var binding_irb irb
  remove_method undef_method remove_const remove_class_variable define_method alias_method
  instance_variable_set class_variable_set const_set attr_accessor attr_writer attr_reader attr
  module_function private public protected private_constant public_constant
  private_class_method public_class_method prepend include extend refine using
  method_missing initialize initialize_copy initialize_dup initialize_clone
  freeze taint untaint trust untrust instance_eval instance_exec class_eval module_eval
  class_exec module_exec eval send __send__ public_send method instance_method
  public_method singleton_method define_singleton_method undefine_finalizer define_finalizer
  start stress= stress disable enable compact verify_compaction_references auto_compact=
  measure_total_time= stat_heap latest_gc_info each_object garbage_collect
  open popen sysopen new_from open_file chdir chmod chown mkdir rmdir unlink delete rename
  symlink link truncate utime lchmod lchown mkfifo umask write binwrite syswrite puts print
  printf putc p pp display warn << reopen close close_read close_write sync= fsync fdatasync
  join value raise_exception thread_variable_set abort_on_exception= report_on_exception=
  transfer resume alive? kill! pass stop wakeup run priority= name= set_scheduler blocking
  step_by_seconds srand seed= then
]

def callable_methods(obj)
  obj.public_methods.reject { |m| SKIP.include?(m) || m.to_s.end_with?("!") && rand(2) == 0 }
rescue Exception
  []
end

srand(SEED)
vals = values
receivers = vals + [Integer, Float, String, Array, Hash, Range, Symbol, Regexp, Time, Struct,
                    Rational, Complex, Comparable, Enumerable, Math, Marshal, Process, Random,
                    Encoding, Enumerator, ObjectSpace, Signal, Kernel, Proc, Method, (Set rescue Object)]
calls = 0
errors = Hash.new(0)
CLASS_OF = Kernel.instance_method(:class)
ROUNDS.times do |i|
  recv = receivers.sample
  recv = (recv.dup rescue recv) if rand(3) == 0
  ms = callable_methods(recv)
  next if ms.empty?
  m = ms.sample
  args = Array.new(rand(4)) { vals.sample }
  block = rand(3) == 0
  begin
    kw = rand(6) == 0 ? { %i[a b exception base digits mode].sample => vals.sample } : {}
    $stderr.puts "#{i}: #{CLASS_OF.bind_call(recv)}##{m}(#{args.map { |a| CLASS_OF.bind_call(a) }.join(', ')})" if TRACE
    if block
      recv.__send__(m, *args, **kw) { |*x| x.first }
    else
      recv.__send__(m, *args, **kw)
    end
    calls += 1
  rescue Exception => e
    raise if e.is_a?(SystemExit)
    errors[CLASS_OF.bind_call(e)] += 1
  end
end
$stderr.puts "#{calls} calls, #{errors.sum { |_, v| v }} exceptions" if TRACE
