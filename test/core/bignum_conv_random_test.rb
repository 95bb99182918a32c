require_relative "../assert"

# Randomized checks of big Integer <-> String conversion (Integer#to_s(base), format's
# %d/%x/%o/%b, Integer(), String#to_i) against a slow conversion written here: divide and
# conquer by base**(12 * 2**k) with Integer#divmod, small parts by Fixnum#to_s. The numbers
# are random words, runs of zero and all-ones words, powers of the base and of 2**64 and
# their neighbours, so that parts straddle the split points and word boundaries.

# A deterministic generator (xorshift64), so a failure names a reproducible case.
class Xorshift
  MASK = 2**64 - 1
  def initialize(seed) = @s = seed
  def next64
    @s ^= (@s << 13) & MASK
    @s ^= @s >> 7
    @s ^= (@s << 17) & MASK
    @s
  end
  def below(n) = next64 % n
end

# The digits of n >= 0 in base, exactly `width` of them (zero-padded) when width is given.
def slow_digits(n, base, width = nil)
  if width.nil?
    return n.to_s(base) if n < base**12
    k = 12
    k *= 2 while base**(2 * k) <= n
    high, low = n.divmod(base**k)
    return slow_digits(high, base) + slow_digits(low, base, k)
  end
  return n.to_s(base).rjust(width, "0") if width <= 12
  half = width / 2
  high, low = n.divmod(base**half)
  slow_digits(high, base, width - half) + slow_digits(low, base, half)
end

def slow_to_s(n, base) = n < 0 ? "-" + slow_digits(-n, base) : slow_digits(n, base)

# A random number of `words` 64-bit words, of a random kind.
def random_number(rng, words)
  kind = rng.below(5)
  n = 0
  words.times do
    w = case kind
        when 0 then rng.next64
        when 1 then 2**64 - 1
        when 2 then rng.below(3).zero? ? rng.next64 : 0
        when 3 then rng.next64 >> rng.below(64)
        else rng.below(4).zero? ? 2**64 - 1 : rng.next64
        end
    n = (n << 64) | w
  end
  n
end

# Under GC stress every allocation collects: fewer and smaller cases exercise the same paths.
STRESS = ENV["CARMINE_GC_STRESS"]
SIZES = STRESS ? [1, 3, 17, 65, 254, 506] : [1, 2, 3, 4, 7, 15, 16, 17, 31, 33, 63, 65, 127, 128, 200, 253, 254, 300, 505, 506, 700, 1010, 1100]

test "Integer#to_s of random numbers matches a slow conversion in every base" do
  rng = Xorshift.new(0x9e3779b97f4a7c15)
  SIZES.each do |words|
    count = STRESS ? 1 : words > 500 ? 2 : 6
    count.times do |i|
      n = random_number(rng, words)
      n = -n if i.odd?
      bases = words > 500 ? [10, 2 + rng.below(35)] : [10, 3, 7, 2 + rng.below(35), 2 + rng.below(35)]
      bases.each do |base|
        s = n.to_s(base)
        assert_equal slow_to_s(n, base), s, "#{words} words, case #{i}, base #{base}"
        assert_equal n, Integer(s, base), "Integer() of #{words} words, base #{base}"
        assert_equal n, s.to_i(base), "String#to_i of #{words} words, base #{base}"
      end
    end
  end
end

test "Integer#to_s around powers of the base and of 2**64" do
  rng = Xorshift.new(12345)
  [3, 7, 10, 16, 35, 36].each do |base|
    (STRESS ? [40, 1200] : [40, 300, 1200, 5000, 20_000]).each do |digits|
      p = base**digits
      [-1, 0, 1, rng.next64, -rng.next64].each do |d|
        n = p + d
        assert_equal slow_to_s(n, base), n.to_s(base), "#{base}**#{digits} + #{d}"
        assert_equal slow_to_s(-n, base), (-n).to_s(base)
      end
      # A digit string with a run of zeros across the middle (and of the top digit).
      top = (base - 1).to_s(base)
      n = p * (base**digits - 1) + base**(digits / 2)
      assert_equal top * digits + "0" * (digits / 2 - 1) + "1" + "0" * (digits / 2), n.to_s(base)
    end
  end
  (STRESS ? [1, 3, 257] : [1, 2, 3, 8, 64, 255, 256, 257, 511, 1024, 3000]).each do |words|
    p = 2**(64 * words)
    [-1, 0, 1].each do |d|
      n = p + d
      assert_equal slow_to_s(n, 10), n.to_s, "2**(64 * #{words}) + #{d}"
      assert_equal n, Integer(n.to_s)
    end
  end
end

test "format's integer conversions of big numbers" do
  rng = Xorshift.new(777)
  (STRESS ? [2, 260] : [2, 5, 40, 260, 600]).each do |words|
    n = random_number(rng, words) | 1
    d = slow_to_s(n, 10)
    assert_equal d, format("%d", n)
    assert_equal "-" + d, format("%d", -n)
    assert_equal "+" + d, format("%+d", n)
    assert_equal d.rjust(d.size + 5), format("%#{d.size + 5}d", n)
    assert_equal slow_to_s(n, 16), format("%x", n)
    assert_equal slow_to_s(n, 16), "%x" % n
    assert_equal slow_to_s(n, 16).upcase, format("%X", n)
    assert_equal slow_to_s(n, 8), format("%o", n)
    assert_equal slow_to_s(n, 2), format("%b", n)
    assert_equal "-" + slow_to_s(n, 16), format("%+x", -n)
    assert_equal d, "#{n}"
  end
end

test "long digit strings parse back, with signs, underscores and leading zeros" do
  rng = Xorshift.new(4242)
  (STRESS ? [2_000] : [2_000, 5_000, 20_000]).each do |len|
    [10, 3, 36].each do |base|
      digits = Array.new(len) { rng.below(base).to_s(base) }.join
      n = Integer(digits, base)
      assert_equal digits.sub(/\A0+(?=.)/, ""), n.to_s(base)
      assert_equal(-n, Integer("-" + digits, base))
      assert_equal n, Integer("0" * 100 + digits, base)
      assert_equal n, digits.to_i(base)
      assert_equal n, Integer(digits.scan(/.{1,5}/).join("_"), base)
    end
  end
end
