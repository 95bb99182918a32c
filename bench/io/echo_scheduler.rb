# The echo server of echo_select.rb written for a fiber scheduler: one Fiber.schedule per
# connection, plain blocking-style `gets`/`write`; the scheduler does the waiting. Carmine
# uses its own (require "carmine/scheduler"); other Rubies use select_scheduler.rb.
#
#   ruby echo_scheduler.rb PORT RECURSIVE CONNECTIONS MESSAGES
#
# The scheduler's loop runs RECURSIVE blocks deep, as in echo_select.rb.
require "socket"

begin
  require "carmine/scheduler"
  scheduler_class = Carmine::Scheduler
rescue LoadError
  require_relative "select_scheduler"
  scheduler_class = SelectScheduler
end

port, recursive, connections, messages = ARGV.map { |a| Integer(a) }
server = TCPServer.new("127.0.0.1", port)

def nested(depth, &block)
  depth == 0 ? yield : 1.times { nested(depth - 1, &block) }
end

nested(recursive) do
  Fiber.set_scheduler(scheduler_class.new)
  echoed = 0
  Fiber.schedule do
    connections.times do
      socket = server.accept
      Fiber.schedule do
        while (line = socket.gets)
          socket.write(line)
          echoed += 1
          exit!(0) if echoed == messages
        end
      end
    end
  end
  Fiber.set_scheduler(nil)
end
