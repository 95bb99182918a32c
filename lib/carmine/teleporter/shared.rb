# The Ruby half of Teleporter's shared objects (the native half, which reads and writes
# the shared memory in place, is crates/carmine-vm/src/teleporter/shared/). Everything
# here is built on those primitives: methods that only read answer from the object in
# place or from a copy (`to_s`, `to_a`, `__pairs`); methods that write work on a copy and
# store it back with `replace`, so they raise FrozenError on a shared (frozen) object and
# Teleporter::MovedError on a moved one, like the primitives.

module Teleporter
  # Inspection and comparison of possibly cyclic graphs: every wrapper of one object
  # answers the same `__id`.
  module SharedRecursion # :nodoc:
    def self.guard(key, obj, recursive)
      seen = (Thread.current[key] ||= {})
      id = obj.__id
      return recursive if seen[id]
      seen[id] = true
      begin
        yield
      ensure
        seen.delete(id)
      end
    end
  end

  class SharedString
    include Comparable

    def inspect = to_s.inspect
    def empty? = bytesize == 0
    def <=>(other) = other.respond_to?(:to_str) ? to_s <=> other.to_str : nil
    def +(other) = to_s + other.to_str
    def =~(pattern) = to_s =~ pattern
    def match(...) = to_s.match(...)
    def match?(...) = to_s.match?(...)
    def start_with?(*prefixes) = prefixes.any? { |p| p.is_a?(Regexp) ? to_s.start_with?(p) : byteslice(0, p.to_str.bytesize) == p.to_str }
    def end_with?(*suffixes) = suffixes.any? { |s| (n = s.to_str.bytesize) <= bytesize && byteslice(bytesize - n, n) == s.to_str }
    def each_byte
      return enum_for(:each_byte) { bytesize } unless block_given?
      i = 0
      n = bytesize
      while i < n
        yield getbyte(i)
        i += 1
      end
      self
    end

    # Methods that read: answered from a copy of the string.
    %i[
      * % ascii_only? b bytes byteindex byterindex capitalize casecmp casecmp? center chars
      chomp chop chr codepoints count crypt delete delete_prefix delete_suffix downcase
      dump each_char each_grapheme_cluster each_line encode grapheme_clusters gsub hex
      index intern lines ljust lstrip next oct ord partition reverse rindex rjust
      rpartition rstrip scan scrub split squeeze strip sub succ sum swapcase to_c to_f to_i
      to_r to_sym tr tr_s unicode_normalize unpack unpack1 upcase upto valid_encoding?
    ].each do |m|
      define_method(m) { |*a, **k, &b| to_s.public_send(m, *a, **k, &b) }
    end

    # Methods that write: done on a copy, stored back (FrozenError unless owned).
    %i[
      []= capitalize! chomp! chop! delete! delete_prefix! delete_suffix! downcase!
      encode! force_encoding gsub! insert lstrip! next! prepend reverse! rstrip! scrub!
      slice! squeeze! strip! sub! succ! swapcase! tr! tr_s! unicode_normalize! upcase!
    ].each do |m|
      define_method(m) do |*a, **k, &b|
        raise FrozenError.new("can't modify frozen #{self.class}: #{inspect}", receiver: self) if frozen?
        s = to_s
        r = s.public_send(m, *a, **k, &b)
        replace(s)
        r.equal?(s) ? self : r
      end
    end
  end

  class SharedArray
    include Enumerable

    def each
      return enum_for(:each) { size } unless block_given?
      i = 0
      while i < size
        yield at(i)
        i += 1
      end
      self
    end

    def each_index(&) = block_given? ? (size.times(&); self) : enum_for(:each_index) { size }
    def empty? = size == 0
    def first(*n) = n.empty? ? at(0) : to_a.first(*n)
    def last(*n) = n.empty? ? at(-1) : to_a.last(*n)
    def fetch(i, *default, &)
      n = i.to_int
      return at(n) if n >= -size && n < size
      return yield(i) if block_given?
      return default[0] unless default.empty?
      raise IndexError, "index #{n} outside of array bounds: #{-size}...#{size}"
    end
    def dig(i, *rest)
      v = self[i]
      rest.empty? || v.nil? ? v : v.dig(*rest)
    end

    def ==(other)
      return true if equal?(other)
      return false unless other.respond_to?(:to_ary)
      SharedRecursion.guard(:__teleporter_eq, self, true) { to_a == other.to_ary }
    end

    def eql?(other)
      return false unless other.is_a?(Array) || other.is_a?(SharedArray)
      SharedRecursion.guard(:__teleporter_eql, self, true) { to_a.eql?(other.to_a) }
    end

    def hash = SharedRecursion.guard(:__teleporter_hash, self, 0) { to_a.hash }
    def inspect = SharedRecursion.guard(:__teleporter_inspect, self, "[...]") { to_a.inspect }
    alias to_s inspect

    def []=(*args)
      return __aset(*args) if args.size == 2 && args[0].is_a?(Integer)
      raise FrozenError.new("can't modify frozen #{self.class}: #{inspect}", receiver: self) if frozen?
      a = to_a
      a.[]=(*args)
      replace(a)
      args.last
    end

    # Methods that read: answered from to_a (elements that are shared objects stay shared).
    %i[
      & * + - <=> | assoc bsearch combination compact cycle difference flatten include?
      index intersect? intersection join pack permutation product rassoc repeated_combination
      repeated_permutation reverse reverse_each rindex rotate sample shuffle sum take
      take_while drop drop_while transpose union uniq values_at
    ].each do |m|
      define_method(m) { |*a, **k, &b| to_a.public_send(m, *a, **k, &b) }
    end

    # Methods that write: done on to_a, stored back (FrozenError unless owned).
    %i[
      collect! compact! concat delete delete_at delete_if fill filter! flatten! insert
      keep_if map! prepend reject! reverse! rotate! select! shuffle! slice! sort! sort_by!
      uniq! unshift
    ].each do |m|
      define_method(m) do |*a, **k, &b|
        raise FrozenError.new("can't modify frozen #{self.class}: #{inspect}", receiver: self) if frozen?
        arr = to_a
        r = arr.public_send(m, *a, **k, &b)
        replace(arr)
        r.equal?(arr) ? self : r
      end
    end
  end

  class SharedHash
    include Enumerable

    def each_pair
      return enum_for(:each_pair) { size } unless block_given?
      __pairs.each { |k, v| yield k, v }
      self
    end
    alias each each_pair

    def each_key(&) = block_given? ? (keys.each(&); self) : enum_for(:each_key) { size }
    def each_value(&) = block_given? ? (values.each(&); self) : enum_for(:each_value) { size }
    def keys = __pairs.map(&:first)
    def values = __pairs.map(&:last)
    def to_h(&) = block_given? ? __pairs.to_h(&) : __pairs.to_h
    def to_hash = to_h
    def to_a = __pairs
    def empty? = size == 0
    def value?(v) = values.include?(v)
    alias has_value? value?
    def key(v) = __pairs.find { |_, x| x == v }&.first
    def values_at(*ks) = ks.map { |k| self[k] }
    def fetch_values(*ks, &) = ks.map { |k| fetch(k, &) }
    def dig(k, *rest)
      v = self[k]
      rest.empty? || v.nil? ? v : v.dig(*rest)
    end

    def fetch(k, *default)
      return self[k] if key?(k)
      return yield(k) if block_given?
      return default[0] unless default.empty?
      raise KeyError.new("key not found: #{k.inspect}", receiver: self, key: k)
    end

    def ==(other)
      return true if equal?(other)
      return false unless other.respond_to?(:to_hash)
      SharedRecursion.guard(:__teleporter_eq, self, true) { to_h == other.to_hash }
    end

    def eql?(other)
      return false unless other.is_a?(Hash) || other.is_a?(SharedHash)
      SharedRecursion.guard(:__teleporter_eql, self, true) { to_h.eql?(other.to_h) }
    end

    def hash = SharedRecursion.guard(:__teleporter_hash, self, 0) { to_h.hash }
    def inspect = SharedRecursion.guard(:__teleporter_inspect, self, "{...}") { to_h.inspect }
    alias to_s inspect

    # Methods that read: answered from to_h.
    %i[any? count filter_map find_all group_by invert merge min_by max_by partition
       reject select filter slice except sort_by sum to_a transform_keys transform_values].each do |m|
      define_method(m) { |*a, **k, &b| to_h.public_send(m, *a, **k, &b) }
    end

    # Methods that write: done on to_h, stored back (FrozenError unless owned).
    %i[compact! delete_if filter! keep_if merge! reject! select! transform_keys!
       transform_values! update].each do |m|
      define_method(m) do |*a, **k, &b|
        raise FrozenError.new("can't modify frozen #{self.class}: #{inspect}", receiver: self) if frozen?
        h = to_h
        r = h.public_send(m, *a, **k, &b)
        replace(h)
        r.equal?(h) ? self : r
      end
    end
  end
end
