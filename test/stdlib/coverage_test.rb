require_relative "../assert"
require_relative "stdlib_path"
require "coverage"
require "tmpdir"

test "line coverage of a required file, legacy and lines: modes, suspend and result options" do
  Dir.mktmpdir do |dir|
    path = File.join(dir, "covered.rb")
    File.write(path, <<~RUBY)
      def covered_twice(x)
        if x
          :yes
        else
          :no
        end
      end
      covered_twice(true)
      covered_twice(true)
    RUBY
    Coverage.start
    assert_true Coverage.running?
    require path
    result = Coverage.result
    assert_false Coverage.running?
    assert_equal [1, 2, 2, nil, 0, nil, nil, 1, 1], result[path]

    Coverage.start(lines: true)
    load path
    Coverage.suspend
    covered_twice(false)
    Coverage.resume
    peek = Coverage.peek_result[path]
    assert_equal({ lines: [1, 2, 2, nil, 0, nil, nil, 1, 1] }, peek)
    Coverage.result(stop: false, clear: true)
    assert_equal [0, 0, 0, nil, 0, nil, nil, 0, 0], Coverage.peek_result[path][:lines]
    Coverage.result
  end
  assert_raise(RuntimeError, "coverage measurement is not enabled") { Coverage.result }
  assert_raise(NotImplementedError) { Coverage.start(branches: true) }
  assert_false Coverage.running?
end
