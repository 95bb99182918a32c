# frozen_string_literal: true
#
# pp: the installed CRuby's pp.rb, with Hashes printed the way Carmine's Hash#inspect
# prints them (Ruby 3.4: `{key: 1, "a b": 2, "k" => 3}`) when that pp.rb predates the
# format (it has no `pp_hash_pair`). Without CRuby's standard library, pp is missing.

stdlib = RbConfig::CONFIG["ruby_stdlib_dir"]
raise LoadError, "cannot load such file -- pp" if stdlib.empty?
require File.join(stdlib, "pp.rb")

unless PP::PPMethods.method_defined?(:pp_hash_pair)
  class PP
    module PPMethods
      def pp_hash(obj)
        group(1, "{", "}") do
          seplist(obj, nil, :each_pair) do |k, v|
            group { pp_hash_pair(k, v) }
          end
        end
      end

      # A Symbol key as a label (`key:`, quoted when it is no identifier), any other
      # key as `key =>`.
      def pp_hash_pair(k, v)
        if k.is_a?(Symbol)
          name = k.name
          text(name.match?(/\A[A-Za-z_][A-Za-z0-9_]*[?!]?\z/) ? "#{name}:" : "#{name.inspect}:")
        else
          pp k
          text " "
          text "=>"
        end
        group(1) do
          breakable
          pp v
        end
      end
    end
  end
end
