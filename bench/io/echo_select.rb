# The founding document's event-loop echo server (seed 000, figs. 10/11), in our own words:
# one fiber per connection; a fiber that wants to read or write registers its socket and
# yields to the event loop, which waits with IO.select and resumes the fibers whose sockets
# are ready. The loop runs RECURSIVE blocks deep, so every switch back to it crosses a
# deeper machine stack (what made Ruby 1.9's copying fibers slow).
#
#   ruby echo_select.rb PORT RECURSIVE CONNECTIONS MESSAGES
#
# The process exits after echoing MESSAGES lines in total (bench/io/echo_client.c counts).
require "socket"

port, recursive, connections, messages = ARGV.map { |a| Integer(a) }
server = TCPServer.new("127.0.0.1", port)
$readers = {}
$writers = {}

def wait_for(io, set)
  set[io] = Fiber.current
  Fiber.yield
  set.delete(io)
end

def event_loop(depth)
  if depth == 0
    loop do
      readable, writable = IO.select($readers.keys, $writers.keys)
      readable.each { |io| $readers[io]&.resume }
      writable.each { |io| $writers[io]&.resume }
    end
  else
    1.times { event_loop(depth - 1) }
  end
end

echoed = 0
connections.times do
  Fiber.new do
    socket = server.accept
    loop do
      wait_for(socket, $readers)
      line = socket.gets
      wait_for(socket, $writers)
      socket.write(line)
      echoed += 1
      exit!(0) if echoed == messages
    end
  end.resume
end

event_loop(recursive)
