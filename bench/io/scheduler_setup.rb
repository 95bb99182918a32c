# The scheduler of the scheduler benchmarks: Carmine::Scheduler, over epoll on Carmine
# (require "carmine/scheduler") and over IO.select (select_selector.rb) on other Rubies.
def new_scheduler
  require "carmine/scheduler"
  Carmine::Scheduler.new
rescue LoadError
  require_relative "../../lib/carmine/scheduler"
  require_relative "select_selector"
  Carmine::Scheduler.new(SelectSelector.new)
end
