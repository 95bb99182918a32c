# frozen_string_literal: true
#
# forwardable/impl: the two hooks forwardable.rb leaves to the Ruby implementation.
# CRuby's version compiles through RubyVM::InstructionSequence, which Carmine does not
# have; this one uses eval, as other implementations do.

module Forwardable
  # Whether `obj.method(...)` is valid syntax, so that the delegator may call the method
  # directly (and warn when it is private) instead of through __send__.
  def self._valid_method?(method)
    # A name Symbol#inspect must quote ("a-b") is no single method call.
    return false if method.to_sym.inspect.start_with?(':"')
    catch do |tag|
      eval("BEGIN{throw tag}; ().#{method}", binding, __FILE__, __LINE__)
    end
  rescue SyntaxError
    false
  else
    true
  end

  # Evaluates the generated source of a delegator (a proc that defines the method).
  def self._compile_method(src, file, line)
    eval(src, nil, file, line)
  end
end
