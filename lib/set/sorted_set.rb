# SortedSet left the set library (Ruby 3.0): referring to it loads the `sorted_set`
# gem when one is installed, and otherwise says where the class went.
begin
  require 'sorted_set'
rescue ::LoadError
  raise "The `SortedSet` class has been extracted from the `set` library. " \
        "You must use the `sorted_set` gem or other alternatives."
end
