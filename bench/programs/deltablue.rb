# A DeltaBlue-style incremental constraint solver (after Freeman-Benson, Maloney and
# Borning's description): variables, constraints with strengths, local propagation plans
# rebuilt incrementally. The chain test adds a long chain of equalities and edits its
# first variable; the projection test edits through scale constraints. Exercises many
# small polymorphic methods and object graphs.
class Strength
  attr_reader :value, :name
  def initialize(value, name)
    @value = value
    @name = name
  end

  def stronger?(other) = @value < other.value
  def weaker?(other) = @value > other.value
  def self.weakest_of(a, b) = a.weaker?(b) ? a : b
  def self.strongest_of(a, b) = a.stronger?(b) ? a : b

  REQUIRED = new(0, :required)
  STRONG_PREFERRED = new(1, :strong_preferred)
  PREFERRED = new(2, :preferred)
  STRONG_DEFAULT = new(3, :strong_default)
  NORMAL = new(4, :normal)
  WEAK_DEFAULT = new(5, :weak_default)
  WEAKEST = new(6, :weakest)
  ORDER = [REQUIRED, STRONG_PREFERRED, PREFERRED, STRONG_DEFAULT, NORMAL, WEAK_DEFAULT, WEAKEST]

  def next_weaker = ORDER[@value + 1]
end

class Variable
  attr_accessor :value, :constraints, :determined_by, :walk_strength, :stay, :mark
  def initialize(name, value = 0)
    @name = name
    @value = value
    @constraints = []
    @determined_by = nil
    @walk_strength = Strength::WEAKEST
    @stay = true
    @mark = 0
  end

  def add_constraint(c) = @constraints << c
  def remove_constraint(c)
    @constraints.delete(c)
    @determined_by = nil if @determined_by.equal?(c)
  end
end

class Constraint
  attr_reader :strength
  def initialize(strength, planner)
    @strength = strength
    @planner = planner
  end

  def add
    add_to_graph
    @planner.incremental_add(self)
  end

  def destroy
    @planner.incremental_remove(self) if satisfied?
    remove_from_graph
  end

  # Tries to satisfy this constraint; returns the constraint it overrides, if any.
  def satisfy(mark)
    choose_method(mark)
    unless satisfied?
      raise "could not satisfy a required constraint" if @strength.equal?(Strength::REQUIRED)
      return nil
    end
    mark_inputs(mark)
    out = output
    overridden = out.determined_by
    overridden.mark_unsatisfied if overridden
    out.determined_by = self
    raise "cycle encountered" unless @planner.add_propagate(self, mark)
    out.mark = mark
    overridden
  end

  def input? = false
end

class UnaryConstraint < Constraint
  def initialize(var, strength, planner)
    super(strength, planner)
    @output = var
    @satisfied = false
    add
  end

  def add_to_graph
    @output.add_constraint(self)
    @satisfied = false
  end

  def remove_from_graph
    @output.remove_constraint(self) if @output
    @satisfied = false
  end

  def choose_method(mark)
    @satisfied = @output.mark != mark && @strength.stronger?(@output.walk_strength)
  end

  def satisfied? = @satisfied
  def mark_inputs(_mark) = nil
  def output = @output
  def each_input = nil
  def mark_unsatisfied = (@satisfied = false)
  def inputs_known?(_mark) = true

  def recalculate
    @output.walk_strength = @strength
    @output.stay = !input?
    execute if @output.stay
  end
end

class StayConstraint < UnaryConstraint
  def execute = nil
end

class EditConstraint < UnaryConstraint
  def input? = true
  def execute = nil
end

class BinaryConstraint < Constraint
  NONE, FORWARD, BACKWARD = 0, 1, 2

  def initialize(v1, v2, strength, planner)
    super(strength, planner)
    @v1 = v1
    @v2 = v2
    @direction = NONE
    add
  end

  def choose_method(mark)
    if @v1.mark == mark
      @direction = @v2.mark != mark && @strength.stronger?(@v2.walk_strength) ? FORWARD : NONE
    elsif @v2.mark == mark
      @direction = @v1.mark != mark && @strength.stronger?(@v1.walk_strength) ? BACKWARD : NONE
    elsif @v1.walk_strength.weaker?(@v2.walk_strength)
      @direction = @strength.stronger?(@v1.walk_strength) ? BACKWARD : NONE
    else
      @direction = @strength.stronger?(@v2.walk_strength) ? FORWARD : BACKWARD
    end
  end

  def add_to_graph
    @v1.add_constraint(self)
    @v2.add_constraint(self)
    @direction = NONE
  end

  def remove_from_graph
    @v1.remove_constraint(self)
    @v2.remove_constraint(self)
    @direction = NONE
  end

  def satisfied? = @direction != NONE
  def mark_inputs(mark) = (input.mark = mark)
  def input = @direction == FORWARD ? @v1 : @v2
  def output = @direction == FORWARD ? @v2 : @v1
  def mark_unsatisfied = (@direction = NONE)

  def inputs_known?(mark)
    i = input
    i.mark == mark || i.stay || i.determined_by.nil?
  end

  def each_input
    yield input
  end

  def recalculate
    ihn = input
    out = output
    out.walk_strength = Strength.weakest_of(@strength, ihn.walk_strength)
    out.stay = ihn.stay
    execute if out.stay
  end
end

class EqualityConstraint < BinaryConstraint
  def execute = (output.value = input.value)
end

class ScaleConstraint < BinaryConstraint
  def initialize(src, scale, offset, dest, strength, planner)
    @scale = scale
    @offset = offset
    super(src, dest, strength, planner)
  end

  def add_to_graph
    super
    @scale.add_constraint(self)
    @offset.add_constraint(self)
  end

  def remove_from_graph
    super
    @scale.remove_constraint(self)
    @offset.remove_constraint(self)
  end

  def mark_inputs(mark)
    super
    @scale.mark = @offset.mark = mark
  end

  def each_input
    yield input
    yield @scale
    yield @offset
  end

  def execute
    if @direction == FORWARD
      @v2.value = @v1.value * @scale.value + @offset.value
    else
      @v1.value = (@v2.value - @offset.value) / @scale.value
    end
  end
end

class Plan
  def initialize = (@constraints = [])
  def <<(c) = @constraints << c
  def execute = @constraints.each(&:execute)
end

class Planner
  def initialize = (@current_mark = 0)

  def new_mark = (@current_mark += 1)

  def incremental_add(c)
    mark = new_mark
    overridden = c.satisfy(mark)
    overridden = overridden.satisfy(mark) while overridden
  end

  def incremental_remove(c)
    out = c.output
    c.mark_unsatisfied
    c.remove_from_graph
    unsatisfied = remove_propagate_from(out)
    strength = Strength::REQUIRED
    while strength
      unsatisfied.each { |u| incremental_add(u) if u.strength.equal?(strength) }
      strength = strength.next_weaker
    end
  end

  # Extracts a plan for resatisfying starting from the outputs of the given constraints.
  def make_plan(sources)
    mark = new_mark
    plan = Plan.new
    todo = sources
    until todo.empty?
      c = todo.pop
      if c.output.mark != mark && c.inputs_known?(mark)
        plan << c
        c.output.mark = mark
        add_constraints_consuming_to(c.output, todo)
      end
    end
    plan
  end

  def extract_plan_from_constraints(constraints)
    sources = constraints.select { |c| c.input? && c.satisfied? }
    make_plan(sources)
  end

  def add_propagate(c, mark)
    todo = [c]
    until todo.empty?
      d = todo.pop
      return false if d.output.mark == mark
      d.recalculate
      add_constraints_consuming_to(d.output, todo)
    end
    true
  end

  def remove_propagate_from(out)
    out.determined_by = nil
    out.walk_strength = Strength::WEAKEST
    out.stay = true
    unsatisfied = []
    todo = [out]
    until todo.empty?
      v = todo.pop
      v.constraints.each { |c| unsatisfied << c unless c.satisfied? }
      determining = v.determined_by
      v.constraints.each do |next_c|
        if !next_c.equal?(determining) && next_c.satisfied?
          next_c.recalculate
          todo << next_c.output
        end
      end
    end
    unsatisfied
  end

  def add_constraints_consuming_to(v, coll)
    determining = v.determined_by
    v.constraints.each do |c|
      coll << c if !c.equal?(determining) && c.satisfied?
    end
  end
end

def change(planner, var, new_value)
  edit = EditConstraint.new(var, Strength::PREFERRED, planner)
  plan = planner.extract_plan_from_constraints([edit])
  10.times do
    var.value = new_value
    plan.execute
  end
  edit.destroy
end

def chain_test(n)
  planner = Planner.new
  vars = Array.new(n + 1) { |i| Variable.new("v#{i}") }
  n.times { |i| EqualityConstraint.new(vars[i], vars[i + 1], Strength::REQUIRED, planner) }
  StayConstraint.new(vars.last, Strength::STRONG_DEFAULT, planner)
  edit = EditConstraint.new(vars.first, Strength::PREFERRED, planner)
  plan = planner.extract_plan_from_constraints([edit])
  sum = 0
  100.times do |i|
    vars.first.value = i
    plan.execute
    raise "chain test failed" if vars.last.value != i
    sum += vars.last.value
  end
  edit.destroy
  sum
end

def projection_test(n)
  planner = Planner.new
  scale = Variable.new("scale", 10)
  offset = Variable.new("offset", 1000)
  src = dst = nil
  dests = []
  n.times do |i|
    src = Variable.new("src#{i}", i)
    dst = Variable.new("dst#{i}", i)
    dests << dst
    StayConstraint.new(src, Strength::NORMAL, planner)
    ScaleConstraint.new(src, scale, offset, dst, Strength::REQUIRED, planner)
  end
  change(planner, src, 17)
  raise "projection 1 failed" if dst.value != 1170
  change(planner, dst, 1050)
  raise "projection 2 failed" if src.value != 5
  change(planner, scale, 5)
  (n - 1).times { |i| raise "projection 3 failed" if dests[i].value != i * 5 + 1000 }
  change(planner, offset, 2000)
  (n - 1).times { |i| raise "projection 4 failed" if dests[i].value != i * 5 + 2000 }
  dests.inject(0) { |s, d| s + d.value }
end

total = 0
40.times do
  total += chain_test(1000)
  total += projection_test(1000)
end
puts total
