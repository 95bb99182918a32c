# A first Carmine program: `carmine examples/hello.rb`
def greet(name) = "Hello, #{name}!"
puts greet("Carmine")
puts [1, 2, 3].sum { |x| x * x }
