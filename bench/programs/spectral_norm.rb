# Spectral norm of an infinite matrix A(i,j) = 1/((i+j)(i+j+1)/2+i+1), by the power method:
# nested loops over Float arrays.
def eval_a(i, j)
  1.0 / ((i + j) * (i + j + 1) / 2 + i + 1)
end

def mul_av(n, v)
  Array.new(n) do |i|
    s = 0.0
    j = 0
    while j < n
      s += eval_a(i, j) * v[j]
      j += 1
    end
    s
  end
end

def mul_atv(n, v)
  Array.new(n) do |i|
    s = 0.0
    j = 0
    while j < n
      s += eval_a(j, i) * v[j]
      j += 1
    end
    s
  end
end

def mul_atav(n, v)
  mul_atv(n, mul_av(n, v))
end

n = 400
u = Array.new(n, 1.0)
v = nil
10.times do
  v = mul_atav(n, u)
  u = mul_atav(n, v)
end
vbv = vv = 0.0
n.times do |i|
  vbv += u[i] * v[i]
  vv += v[i] * v[i]
end
puts (Math.sqrt(vbv / vv) * 1e9).round
