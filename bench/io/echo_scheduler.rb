# The echo server of echo_select.rb written for a fiber scheduler: one Fiber.schedule per
# connection, plain blocking-style `gets`/`write`; the scheduler does the waiting. Carmine
# uses its scheduler over epoll, other Rubies the same scheduler over IO.select
# (scheduler_setup.rb).
#
#   ruby echo_scheduler.rb PORT RECURSIVE CONNECTIONS MESSAGES
#
# The scheduler's loop runs RECURSIVE blocks deep, as in echo_select.rb.
require "socket"

require_relative "scheduler_setup"

port, recursive, connections, messages = ARGV.map { |a| Integer(a) }
server = TCPServer.new("127.0.0.1", port)

def nested(depth, &block)
  depth == 0 ? yield : 1.times { nested(depth - 1, &block) }
end

nested(recursive) do
  Fiber.set_scheduler(new_scheduler)
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
