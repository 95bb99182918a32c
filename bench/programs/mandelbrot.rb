# Mandelbrot set: a bitmap of size x size computed with Float arithmetic in while loops;
# prints a checksum of the bytes instead of the PBM image.
size = 750
sum = 0
bits = 0
bit_num = 0
y = 0
while y < size
  ci = 2.0 * y / size - 1.0
  x = 0
  while x < size
    zr = zi = tr = ti = 0.0
    cr = 2.0 * x / size - 1.5
    i = 0
    while i < 50 && tr + ti <= 4.0
      zi = 2.0 * zr * zi + ci
      zr = tr - ti + cr
      tr = zr * zr
      ti = zi * zi
      i += 1
    end
    bits = (bits << 1) | (tr + ti <= 4.0 ? 1 : 0)
    bit_num += 1
    if bit_num == 8 || x == size - 1
      bits <<= (8 - bit_num) if bit_num < 8
      sum = (sum * 31 + bits) & 0xffffff
      bits = 0
      bit_num = 0
    end
    x += 1
  end
  y += 1
end
puts sum
