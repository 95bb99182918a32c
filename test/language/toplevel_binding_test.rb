require_relative "../assert"

test "TOPLEVEL_BINDING sees the main script's locals as they change" do
  out, err, status = run_carmine(<<~RUBY)
    p TOPLEVEL_BINDING.local_variable_get(:a)
    a = 1
    p TOPLEVEL_BINDING.local_variable_get(:a)
    a = 3
    p TOPLEVEL_BINDING.local_variable_get(:a)
    p TOPLEVEL_BINDING.local_variables
    TOPLEVEL_BINDING.local_variable_set(:dyn, 2)
    p TOPLEVEL_BINDING.local_variables.sort
    p TOPLEVEL_BINDING.receiver
    p TOPLEVEL_BINDING.equal?(eval("TOPLEVEL_BINDING"))
    p TOPLEVEL_BINDING.eval("a")
  RUBY
  assert_equal "", err
  assert_equal 0, status.exitstatus
  assert_equal ["nil", "1", "3", "[:a]", "[:a, :dyn]", "main", "true", "3"], out.lines.map(&:chomp)
end

test "a required file's locals are not in TOPLEVEL_BINDING" do
  lib = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_tb_lib_#{Process.pid}.rb"
  File.write(lib, "required_local = 1\np TOPLEVEL_BINDING.local_variables\n")
  out, _err, status = run_carmine("main_local = 1\nrequire #{lib.inspect}\np TOPLEVEL_BINDING.local_variables\n")
  File.delete(lib)
  assert_equal 0, status.exitstatus
  assert_equal "[:main_local]\n[:main_local]\n", out
end
