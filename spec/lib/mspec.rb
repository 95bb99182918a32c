# Carmine's mspec-compatible spec library for ruby/spec.
#
# This is an independent implementation of the API that ruby/spec files use
# (describe/it, `should` expectations and matchers, mocks, guards and helpers),
# written from mspec's documented behaviour. It is deliberately plain Ruby so
# that it runs both on CRuby and on Carmine, the implementation under test.
#
# Invariants:
# - Every block of a spec file (describe bodies, before/after hooks, examples)
#   runs with `self` = one shared environment object (`MSpec.env`), so instance
#   variables set in a `before` hook are visible in the examples, as in mspec.
# - A top-level `describe` is evaluated (collecting its examples and nested
#   describes) and then run immediately, before the rest of the file loads.
# - Each example ends as exactly one result: pass, fail (expectation not met)
#   or error (any other exception). Examples skipped by guards are not counted.
#
# The per-file entry point is `mspec/main.rb`; `spec/run` drives it.

module MSpec
end

require_relative 'mspec/version'
require_relative 'mspec/expectations'
require_relative 'mspec/matchers'
require_relative 'mspec/mocks'
require_relative 'mspec/guards'
require_relative 'mspec/helpers'
require_relative 'mspec/context'
