# A Richards-style operating-system simulation: a scheduler picks the highest-priority
# runnable task from a linked list of task control blocks; an idle task, a worker, two
# handlers and two devices pass packets to each other through queues. Exercises
# polymorphic method calls, instance variables and linked structures.
ID_IDLE, ID_WORKER, ID_HANDLER_A, ID_HANDLER_B, ID_DEVICE_A, ID_DEVICE_B = 0, 1, 2, 3, 4, 5
KIND_DEVICE, KIND_WORK = 0, 1

class Packet
  attr_accessor :link, :id, :kind, :a1, :data
  def initialize(link, id, kind)
    @link = link
    @id = id
    @kind = kind
    @a1 = 0
    @data = Array.new(4, 0)
  end

  # Appends self to the queue starting at `queue`; returns the new head.
  def append_to(queue)
    @link = nil
    return self unless queue
    last = queue
    last = last.link while last.link
    last.link = self
    queue
  end
end

class Tcb
  attr_accessor :link, :id, :priority, :queue, :task
  def initialize(link, id, priority, queue, task)
    @link = link
    @id = id
    @priority = priority
    @queue = queue
    @task = task
    @packet_pending = !queue.nil?
    @waiting = false
    @held = false
  end

  def hold! = (@held = true)
  def release! = (@held = false)
  def wait! = (@waiting = true)
  def ready?
    return false if @held
    @packet_pending || !@waiting
  end

  # Runs the task with the first queued packet if it was waiting for one.
  def run
    packet = nil
    if @waiting && @packet_pending
      packet = @queue
      @queue = packet.link
      @packet_pending = !@queue.nil?
      @waiting = false
    end
    @task.run(packet)
  end

  # Queues a packet; true if this task should preempt the sender.
  def check_priority_add(current, packet)
    if @queue.nil?
      @queue = packet
      @packet_pending = true
      return @priority > current.priority
    end
    @queue = packet.append_to(@queue)
    false
  end
end

class Scheduler
  attr_reader :queue_count, :hold_count

  def initialize
    @table = Array.new(6)
    @list = nil
    @current = nil
    @queue_count = 0
    @hold_count = 0
  end

  def add_task(id, priority, queue, task)
    @current = Tcb.new(@list, id, priority, queue, task)
    @list = @current
    @table[id] = @current
  end

  def schedule
    @current = @list
    while @current
      if @current.ready?
        @current = @current.run
      else
        @current = @current.link
      end
    end
  end

  def hold_current
    @hold_count += 1
    @current.hold!
    @current.link
  end

  def release(id)
    tcb = @table[id]
    return tcb unless tcb
    tcb.release!
    tcb.priority > @current.priority ? tcb : @current
  end

  def wait_current
    @current.wait!
    @current
  end

  def queue(packet)
    t = @table[packet.id]
    return t unless t
    @queue_count += 1
    packet.link = nil
    packet.id = @current.id
    t.check_priority_add(@current, packet) ? t : @current
  end
end

class IdleTask
  def initialize(scheduler, seed, count)
    @s = scheduler
    @v = seed
    @count = count
  end

  def run(_packet)
    @count -= 1
    return @s.hold_current if @count == 0
    if @v & 1 == 0
      @v >>= 1
      @s.release(ID_DEVICE_A)
    else
      @v = (@v >> 1) ^ 0xD008
      @s.release(ID_DEVICE_B)
    end
  end
end

class WorkerTask
  def initialize(scheduler)
    @s = scheduler
    @dest = ID_HANDLER_A
    @count = 0
  end

  def run(packet)
    return @s.wait_current unless packet
    @dest = @dest == ID_HANDLER_A ? ID_HANDLER_B : ID_HANDLER_A
    packet.id = @dest
    packet.a1 = 0
    4.times do |i|
      @count += 1
      @count = 1 if @count > 26
      packet.data[i] = @count
    end
    @s.queue(packet)
  end
end

class HandlerTask
  def initialize(scheduler)
    @s = scheduler
    @work = nil
    @devices = nil
  end

  def run(packet)
    if packet
      if packet.kind == KIND_WORK
        @work = packet.append_to(@work)
      else
        @devices = packet.append_to(@devices)
      end
    end
    if @work
      count = @work.a1
      if count < 4
        if @devices
          dev = @devices
          @devices = dev.link
          dev.a1 = @work.data[count]
          @work.a1 = count + 1
          return @s.queue(dev)
        end
      else
        w = @work
        @work = w.link
        return @s.queue(w)
      end
    end
    @s.wait_current
  end
end

class DeviceTask
  attr_reader :received
  def initialize(scheduler)
    @s = scheduler
    @pending = nil
    @received = 0
  end

  def run(packet)
    if packet
      @pending = packet
      @received += packet.a1
      @s.hold_current
    else
      return @s.wait_current unless @pending
      p = @pending
      @pending = nil
      @s.queue(p)
    end
  end
end

def run_richards
  s = Scheduler.new
  s.add_task(ID_IDLE, 0, nil, IdleTask.new(s, 1, 10_000))
  q = Packet.new(nil, ID_WORKER, KIND_WORK)
  q = Packet.new(q, ID_WORKER, KIND_WORK)
  s.add_task(ID_WORKER, 1000, q, WorkerTask.new(s))
  [ID_HANDLER_A, ID_HANDLER_B].each_with_index do |id, n|
    dev = n == 0 ? ID_DEVICE_A : ID_DEVICE_B
    q = Packet.new(nil, dev, KIND_DEVICE)
    q = Packet.new(q, dev, KIND_DEVICE)
    q = Packet.new(q, dev, KIND_DEVICE)
    s.add_task(id, 2000 + n, q, HandlerTask.new(s))
  end
  s.add_task(ID_DEVICE_A, 4000, nil, DeviceTask.new(s))
  s.add_task(ID_DEVICE_B, 5000, nil, DeviceTask.new(s))
  s.schedule
  [s.queue_count, s.hold_count]
end

r = nil
40.times { r = run_richards }
puts r.inspect
