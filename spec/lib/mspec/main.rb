# Runs spec files in this process:
#
#   <ruby> spec/lib/mspec/main.rb [--results FILE] [--verbose] FILE_spec.rb...
#
# Results are appended to FILE as they happen (one line per example, see
# MSpec::Reporter), so a crash or timeout of this process loses nothing
# already run. Without --results a summary and the failures are printed.
# The exit status is 0 when every example passed.

ENV['MSPEC_RUNNER'] = '1'
require_relative '../mspec'

results = nil
verbose = false
files = []
args = ARGV.dup
until args.empty?
  arg = args.shift
  case arg
  when '--results' then results = args.shift
  when '--verbose', '-v' then verbose = true
  else files << arg
  end
end

# As mspec does: deprecation warnings on (specs check them with `complain`),
# experimental-feature warnings off.
if defined?(Warning) && Warning.respond_to?(:[]=)
  Warning[:deprecated] = true
  Warning[:experimental] = false
end

reporter = MSpec::Reporter.new(results)
MSpec.reporter = reporter

files.each do |file|
  path = File.expand_path(file)
  begin
    load path
  rescue MSpec::SkipExample
    nil
  rescue SystemExit => e
    reporter.exception("#{file} (exited while loading)", e)
  rescue Exception => e
    reporter.exception("#{file} (while loading the file)", e)
  end
end

# Marks a complete run for spec/run (a missing marker means a crash).
reporter.emit(['D', 'done'])

if verbose || results.nil?
  reporter.print_failures($stdout)
  $stdout.write("\n#{reporter.summary}\n")
end
reporter.close
exit(reporter.failed + reporter.errors == 0 ? 0 : 1)
