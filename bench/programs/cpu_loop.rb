# A small 8-bit CPU emulator in the style of a NES core: 64 KB of memory in an Array of
# Integers, registers in instance variables, flags computed per instruction, a `case`
# dispatch over opcodes. The program it runs fills and checksums memory in nested loops.
class Cpu
  LDA_IMM = 0xA9; LDX_IMM = 0xA2; LDY_IMM = 0xA0
  LDA_ABX = 0xBD; STA_ABX = 0x9D; STA_ZP = 0x85; LDA_ZP = 0xA5
  ADC_IMM = 0x69; ADC_ZP = 0x65; EOR_ZP = 0x45; AND_IMM = 0x29
  INX = 0xE8; DEX = 0xCA; INY = 0xC8; DEY = 0x88; TAX = 0xAA; TXA = 0x8A
  CLC = 0x18; BNE = 0xD0; BEQ = 0xF0; JMP = 0x4C; CPX_IMM = 0xE0; BRK = 0x00
  INC_ZP = 0xE6

  attr_reader :cycles, :mem, :a

  def initialize(program, origin)
    @mem = Array.new(65_536, 0)
    program.each_with_index { |b, i| @mem[origin + i] = b }
    @pc = origin
    @a = @x = @y = 0
    @carry = false
    @zero = false
    @negative = false
    @cycles = 0
  end

  def fetch
    b = @mem[@pc]
    @pc = (@pc + 1) & 0xffff
    b
  end

  def fetch16
    lo = fetch
    lo | (fetch << 8)
  end

  def set_zn(v)
    @zero = v == 0
    @negative = v & 0x80 != 0
    v
  end

  def branch(cond)
    off = fetch
    off -= 256 if off >= 128
    @pc = (@pc + off) & 0xffff if cond
  end

  def run
    while true
      op = fetch
      @cycles += 1
      case op
      when LDA_IMM then @a = set_zn(fetch)
      when LDX_IMM then @x = set_zn(fetch)
      when LDY_IMM then @y = set_zn(fetch)
      when LDA_ABX then @a = set_zn(@mem[(fetch16 + @x) & 0xffff])
      when STA_ABX then @mem[(fetch16 + @x) & 0xffff] = @a
      when STA_ZP then @mem[fetch] = @a
      when LDA_ZP then @a = set_zn(@mem[fetch])
      when ADC_IMM, ADC_ZP
        v = op == ADC_IMM ? fetch : @mem[fetch]
        s = @a + v + (@carry ? 1 : 0)
        @carry = s > 0xff
        @a = set_zn(s & 0xff)
      when EOR_ZP then @a = set_zn(@a ^ @mem[fetch])
      when AND_IMM then @a = set_zn(@a & fetch)
      when INX then @x = set_zn((@x + 1) & 0xff)
      when DEX then @x = set_zn((@x - 1) & 0xff)
      when INY then @y = set_zn((@y + 1) & 0xff)
      when DEY then @y = set_zn((@y - 1) & 0xff)
      when TAX then @x = set_zn(@a)
      when TXA then @a = set_zn(@x)
      when CLC then @carry = false
      when CPX_IMM
        v = fetch
        @carry = @x >= v
        set_zn((@x - v) & 0xff)
      when INC_ZP
        addr = fetch
        @mem[addr] = set_zn((@mem[addr] + 1) & 0xff)
      when BNE then branch(!@zero)
      when BEQ then branch(@zero)
      when JMP then @pc = fetch16
      when BRK then return
      else raise "unknown opcode #{op} at #{@pc - 1}"
      end
    end
  end
end

# The program: for each of 256 passes (counter in zero page 0x10), write a pattern into
# 0x0200..0x02FF derived from X and the pass number, then sum it (with carries) into
# zero page 0x11 and fold it with EOR into 0x12.
c = Cpu
program = [
  c::LDA_IMM, 0, c::STA_ZP, 0x10, c::STA_ZP, 0x11, c::STA_ZP, 0x12,
  # pass:                                                     (offset 8)
  c::LDX_IMM, 0,
  # fill:                                                     (offset 10)
  c::TXA, c::ADC_ZP, 0x10, c::AND_IMM, 0x7f, c::STA_ABX, 0x00, 0x02, c::INX, c::BNE, 0xF5,
  # sum:                                                      (offset 21)
  c::LDX_IMM, 0,
  c::CLC, c::LDA_ABX, 0x00, 0x02, c::ADC_ZP, 0x11, c::STA_ZP, 0x11,
  c::LDA_ABX, 0x00, 0x02, c::EOR_ZP, 0x12, c::STA_ZP, 0x12, c::INX, c::BNE, 0xEE,
  c::INC_ZP, 0x10, c::LDA_ZP, 0x10, c::BEQ, 0x03, c::JMP, 0x08, 0x06, c::BRK,
]
cpu = nil
5.times do
  cpu = Cpu.new(program, 0x0600)
  cpu.run
end
puts cpu.cycles
puts [cpu.mem[0x10], cpu.mem[0x11], cpu.mem[0x12]].inspect
