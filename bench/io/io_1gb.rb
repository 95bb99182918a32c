# Reads a large file three ways, as `ruby io_1gb.rb MODE PATH`:
#   read        IO.read(PATH) into one String
#   foreach     File.foreach(PATH) { |line| } over every line
#   copy_stream IO.copy_stream(PATH, "/dev/null")
mode, path = ARGV
case mode
when "read" then IO.read(path).bytesize
when "foreach" then File.foreach(path) { |_line| }
when "copy_stream" then IO.copy_stream(path, "/dev/null")
else abort "unknown mode #{mode}"
end
