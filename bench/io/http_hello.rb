# A fiber-per-connection HTTP/1.1 "hello" server on a fiber scheduler (Carmine::Scheduler
# on Carmine, select_scheduler.rb elsewhere), for `wrk -c 100`. Keep-alive; each request's
# header lines are read with `gets` and answered with a fixed 200 response.
#
#   ruby http_hello.rb PORT
require "socket"

begin
  require "carmine/scheduler"
  scheduler_class = Carmine::Scheduler
rescue LoadError
  require_relative "select_scheduler"
  scheduler_class = SelectScheduler
end

port = Integer(ARGV.fetch(0))
server = TCPServer.new("127.0.0.1", port)
server.listen(1024)
RESPONSE = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!"

Fiber.set_scheduler(scheduler_class.new)
Fiber.schedule do
  loop do
    client = server.accept
    Fiber.schedule do
      while (request_line = client.gets)
        while (header = client.gets) && header != "\r\n"
        end
        client.write(RESPONSE)
      end
    rescue Errno::ECONNRESET, Errno::EPIPE
    ensure
      client.close
    end
  end
end
