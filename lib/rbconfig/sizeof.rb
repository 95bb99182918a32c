# frozen_string_literal: true
#
# rbconfig/sizeof: RbConfig::SIZEOF (sizes in bytes of C types) and RbConfig::LIMITS
# (their ranges, and Fixnum's) for the LP64 Linux targets Carmine builds for (x86-64 and
# AArch64; `char` is unsigned on AArch64).

require "rbconfig"

module RbConfig
  sizes = {
    "char" => 1, "short" => 2, "int" => 4, "long" => 8, "long long" => 8,
    "__int128" => 16, "off_t" => 8, "void*" => 8, "float" => 4, "double" => 8,
    "time_t" => 8, "clock_t" => 8, "size_t" => 8, "ptrdiff_t" => 8, "dev_t" => 8,
    "intptr_t" => 8, "uintptr_t" => 8, "ssize_t" => 8, "intmax_t" => 8,
    "sig_atomic_t" => 4, "wchar_t" => 4, "wint_t" => 4, "_Bool" => 1,
    "long double" => 16,
  }
  [8, 16, 32, 64, 128].each do |bits|
    sizes["int#{bits}_t"] = sizes["uint#{bits}_t"] = bits / 8
  end
  [8, 16, 32, 64].each do |bits|
    sizes["int_least#{bits}_t"] = bits / 8
    sizes["int_fast#{bits}_t"] = bits == 8 ? 1 : 8
  end
  SIZEOF = sizes.freeze

  char_signed = !RUBY_PLATFORM.start_with?("aarch64")
  limits = {
    "FIXNUM_MAX" => 2**62 - 1, "FIXNUM_MIN" => -2**62,
    "CHAR_MAX" => char_signed ? 127 : 255, "CHAR_MIN" => char_signed ? -128 : 0,
    "SCHAR_MAX" => 127, "SCHAR_MIN" => -128, "UCHAR_MAX" => 255,
    "WCHAR_MAX" => 2**31 - 1, "WCHAR_MIN" => -2**31,
  }
  signed = lambda do |name, bits|
    limits["#{name}_MAX"] = 2**(bits - 1) - 1
    limits["#{name}_MIN"] = -2**(bits - 1)
  end
  unsigned = ->(name, bits) { limits["#{name}_MAX"] = 2**bits - 1 }
  { "SHRT" => 16, "INT" => 32, "LONG" => 64, "LLONG" => 64 }.each do |n, bits|
    signed[n, bits]
    unsigned[n == "SHRT" ? "USHRT" : "U#{n}", bits]
  end
  [8, 16, 32, 64].each do |bits|
    signed["INT#{bits}", bits]
    unsigned["UINT#{bits}", bits]
    signed["INT_LEAST#{bits}", bits]
    unsigned["UINT_LEAST#{bits}", bits]
    fast = bits == 8 ? 8 : 64
    signed["INT_FAST#{bits}", fast]
    unsigned["UINT_FAST#{bits}", fast]
  end
  signed["INTMAX", 64]
  unsigned["UINTMAX", 64]
  signed["INTPTR", 64]
  unsigned["UINTPTR", 64]
  unsigned["SIZE", 64]
  signed["PTRDIFF", 64]
  LIMITS = limits.freeze
end
