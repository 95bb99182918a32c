# A fiber-per-connection HTTP/1.1 "hello" server on a fiber scheduler (Carmine::Scheduler
# over epoll on Carmine, over IO.select elsewhere: scheduler_setup.rb), for `wrk -c 100`. Keep-alive; each request's
# header lines are read with `gets` and answered with a fixed 200 response.
#
#   ruby http_hello.rb PORT
require "socket"

require_relative "scheduler_setup"

port = Integer(ARGV.fetch(0))
server = TCPServer.new("127.0.0.1", port)
server.listen(1024)
RESPONSE = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!"

Fiber.set_scheduler(new_scheduler)
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
