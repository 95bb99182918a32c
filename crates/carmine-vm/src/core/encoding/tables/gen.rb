# Generates the transcoding tables in this folder: run with CRuby from the repository root,
#   ruby crates/carmine-vm/src/core/encoding/tables/gen.rb
#
# Each table is observed from the reference implementation's behaviour (what a character
# decodes to, what a codepoint encodes to), so Carmine's tables agree with CRuby's by
# construction. File format (all integers u32 little-endian):
#   "CETB", n_decode, n_encode
#   n_decode pairs (sequence, codepoint), sorted by sequence; the sequence is its bytes
#     read as a big-endian integer (1 to 4 bytes; every multibyte lead is >= 0x80)
#   n_encode pairs (codepoint, sequence), sorted by codepoint: only where encoding differs
#     from the inverse of the decode table (first sequence per codepoint wins);
#     sequence 0xFFFFFFFF means the codepoint is undefined in the encoding;
#     n_encode = 0xFFFFFFFF: the encoding can only be decoded.
# Characters that decode to more than one codepoint are left out (undefined).

DIR = File.dirname(__FILE__)

SINGLE = %w[ISO-8859-1 ISO-8859-2 ISO-8859-3 ISO-8859-4 ISO-8859-5 ISO-8859-6 ISO-8859-7
  ISO-8859-8 ISO-8859-9 ISO-8859-10 ISO-8859-11 ISO-8859-13 ISO-8859-14 ISO-8859-15 ISO-8859-16
  Windows-874 Windows-1250 Windows-1251 Windows-1252 Windows-1253 Windows-1254 Windows-1255
  Windows-1256 Windows-1257 Windows-1258 IBM437 IBM720 IBM737 IBM775 CP850 IBM852 CP852 IBM855
  CP855 IBM857 IBM860 IBM861 IBM862 IBM863 IBM864 IBM865 IBM866 IBM869 KOI8-R KOI8-U TIS-620
  macCentEuro macCroatian macCyrillic macGreek macIceland macRoman macRomania macThai
  macTurkish macUkraine GB1988 IBM037]
MULTI = %w[Shift_JIS Windows-31J MacJapanese EUC-JP eucJP-ms CP51932 EUC-KR CP949 Big5 CP950
  CP951 Big5-HKSCS Big5-UAO GBK GB2312 GB12345 GB18030 EUC-TW EUC-JIS-2004 SJIS-DoCoMo SJIS-KDDI
  SJIS-SoftBank]

def utf8_cps(s)
  u = s.encode("UTF-8")
  u.codepoints
rescue EncodingError
  nil
end

def key(bytes) = bytes.inject(0) { |a, b| (a << 8) | b }

def write(name, dec, enc_exc)
  File.open(File.join(DIR, "#{name.downcase}.bin"), "wb") do |f|
    f.write("CETB")
    f.write([dec.size, enc_exc ? enc_exc.size : 0xFFFFFFFF].pack("V2"))
    dec.sort.each { |k, v| f.write([k, v].pack("V2")) }
    (enc_exc || {}).sort.each { |k, v| f.write([k, v].pack("V2")) }
  end
end

def build(name, seqs, cp_range)
  e = Encoding.find(name)
  dec = {}
  seqs.each do |bytes|
    s = bytes.pack("C*").force_encoding(e)
    # The Big5 converters also read leads 0x81-0xA0, which the encoding itself rejects.
    big5_lead = name =~ /Big5|CP95/ && bytes.size == 2 && (0x81..0xA0).include?(bytes[0])
    next unless (s.valid_encoding? && s.length == 1) || big5_lead
    cps = utf8_cps(s)
    next unless cps && cps.size == 1
    dec[key(bytes)] = cps[0]
  end
  inverse = {}
  dec.sort.each { |k, v| inverse[v] ||= k }
  exc = {}
  begin
    "\u00e9".encode(e, undef: :replace)
  rescue Encoding::ConverterNotFoundError
    exc = nil # decode only: the reference has no converter from UTF-8 to this encoding
  end
  cp_range.each do |cp|
    break unless exc
    next if (0xD800..0xDFFF).include?(cp)
    r = [cp].pack("U").encode(e, undef: :replace, invalid: :replace, replace: "")
    want = r.empty? ? 0xFFFFFFFF : key(r.bytes)
    exc[cp] = want if inverse.fetch(cp, 0xFFFFFFFF) != want
  end
  # Only ASCII decodes and nothing encodes: the reference has no converter for it.
  return warn("#{name}: no converter") if dec.keys.all? { |k| k < 0x80 } && exc.nil?
  write(name, dec, exc)
  warn "#{name}: #{dec.size} decode, #{exc ? exc.size : "no"} encode exceptions"
end

only = ARGV
SINGLE.each do |n|
  next unless only.empty? || only.include?(n)
  build(n, (0..255).map { |b| [b] }, 0..0xFFFF)
end
MULTI.each do |n|
  next unless only.empty? || only.include?(n)
  seqs = (0..0x7F).map { |b| [b] } + (0x80..0xFF).map { |b| [b] }
  (0x81..0xFE).each { |l| (0x21..0xFE).each { |t| seqs << [l, t] } }
  if n =~ /EUC-JP|eucJP|CP51932|EUC-JIS/
    (0xA1..0xFE).each { |a| (0xA1..0xFE).each { |b| seqs << [0x8F, a, b] } }
  end
  if n == "EUC-TW"
    (0xA1..0xB0).each { |p| (0xA1..0xFE).each { |a| (0xA1..0xFE).each { |b| seqs << [0x8E, p, a, b] } } }
  end
  extra = n =~ /HKSCS|GB18030|EUC-TW|EUC-JIS/ ? 0x20000..0x2FFFF : nil
  range = extra ? (0..0xFFFF).to_a + extra.to_a : 0..0xFFFF
  range = 0..0x7F if n == "GB18030" # GB18030's 4-byte part is algorithmic; see below
  build(n, seqs, range)
end

# GB18030: the 4-byte sequences of the BMP are runs of consecutive codepoints; written as
# (linear index, first codepoint) pairs in gb18030_ranges.bin.
if only.empty? || only.include?("GB18030")
  e = Encoding::GB18030
  runs = []
  prev = nil
  39420.times do |i|
    b4 = i % 10; i2 = i / 10; b3 = i2 % 126; i3 = i2 / 126; b2 = i3 % 10; b1 = i3 / 10
    s = [0x81 + b1, 0x30 + b2, 0x81 + b3, 0x30 + b4].pack("C*").force_encoding(e)
    cp = (utf8_cps(s) || [nil])[0]
    next unless cp
    if prev && prev[0] + 1 == i && prev[1] + 1 == cp
      runs[-1][2] += 1
    else
      runs << [i, cp, 1]
    end
    prev = [i, cp]
  end
  File.open(File.join(DIR, "gb18030_ranges.bin"), "wb") { |f| runs.each { |r| f.write(r.pack("V3")) } }
  warn "GB18030 ranges: #{runs.size}"
end
