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

  # How the three classes define the methods they answer from a plain copy of themselves
  # (`to_s`, `to_a`, `to_h`): one definition of each shape, used by all three.
  module SharedMethods # :nodoc:
    # Methods that read: answered from `klass#copy`.
    def self.readers(klass, copy, names)
      names.each do |m|
        klass.define_method(m) { |*a, **k, &b| __send__(copy).public_send(m, *a, **k, &b) }
      end
    end

    # FrozenError unless `obj` may be written (before a copy is changed).
    def self.writable!(obj)
      raise FrozenError.new("can't modify frozen #{obj.class}: #{obj.inspect}", receiver: obj) if obj.frozen?
    end

    # Methods that write: done on `klass#copy`, stored back with `replace` (FrozenError
    # unless owned, Teleporter::MovedError once moved: `replace` raises them).
    def self.writers(klass, copy, names)
      names.each do |m|
        klass.define_method(m) do |*a, **k, &b|
          SharedMethods.writable!(self)
          c = __send__(copy)
          r = c.public_send(m, *a, **k, &b)
          replace(c)
          r.equal?(c) ? self : r
        end
      end
    end

    # `eql?`, `hash`, `inspect` and `to_s` of a container (SharedArray, SharedHash): those
    # of its plain copy (`copy`), compared with an instance of `plain` or of `klass`
    # (`eql?`), printing `cycle` for a cycle. And `__eq`, what the native `==` calls once
    # it knows that `other` converts with `implicit` (it answers the other cases itself).
    def self.comparisons(klass, plain:, copy:, implicit:, cycle:)
      klass.define_method(:__eq) do |other|
        SharedRecursion.guard(:__teleporter_eq, self, true) { __send__(copy) == other.__send__(implicit) }
      end
      klass.define_method(:eql?) do |other|
        return false unless other.is_a?(plain) || other.is_a?(klass)
        SharedRecursion.guard(:__teleporter_eql, self, true) { __send__(copy).eql?(other.__send__(copy)) }
      end
      klass.define_method(:hash) { SharedRecursion.guard(:__teleporter_hash, self, 0) { __send__(copy).hash } }
      klass.define_method(:inspect) { SharedRecursion.guard(:__teleporter_inspect, self, cycle) { __send__(copy).inspect } }
      klass.alias_method(:to_s, :inspect)
    end
  end

  class SharedString
    include Comparable

    def inspect = to_s.inspect
    def empty? = bytesize == 0
    def <=>(other) = other.respond_to?(:to_str) ? to_s <=> other.to_str : nil
    def +(other) = to_s + other.to_str
    # As String#+@: the object itself while it may be written, else a writable copy.
    def +@ = frozen? ? to_s : self
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

    SharedMethods.readers(self, :to_s, %i[
      * % -@ ascii_only? b bytes byteindex byterindex capitalize casecmp casecmp? center
      chars chomp chop chr codepoints count crypt dedup delete delete_prefix delete_suffix
      downcase dump each_char each_codepoint each_grapheme_cluster each_line encode
      grapheme_clusters gsub hex index intern lines ljust lstrip next oct ord partition
      reverse rindex rjust rpartition rstrip scan scrub split squeeze strip sub succ sum
      swapcase to_c to_f to_i to_r to_sym tr tr_s undump unicode_normalize
      unicode_normalized? unpack unpack1 upcase upto valid_encoding?
    ])

    SharedMethods.writers(self, :to_s, %i[
      []= append_as_bytes bytesplice capitalize! chomp! chop! delete! delete_prefix!
      delete_suffix! downcase! encode! force_encoding gsub! insert lstrip! next! prepend reverse! rstrip! scrub!
      slice! squeeze! strip! sub! succ! swapcase! tr! tr_s! unicode_normalize! upcase!
    ])
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

    SharedMethods.comparisons(self, plain: Array, copy: :to_a, implicit: :to_ary, cycle: "[...]")

    def []=(*args)
      return __aset(*args) if args.size == 2 && args[0].is_a?(Integer)
      SharedMethods.writable!(self)
      a = to_a
      a.[]=(*args)
      replace(a)
      args.last
    end

    # Elements that are shared objects stay shared in `to_a`.
    SharedMethods.readers(self, :to_a, %i[
      & * + - <=> | assoc bsearch bsearch_index combination compact cycle deconstruct
      difference fetch_values flatten include? index intersect? intersection join pack
      permutation product rassoc repeated_combination repeated_permutation reverse
      reverse_each rindex rotate sample shuffle sum take take_while drop drop_while
      transpose union uniq values_at
    ])

    SharedMethods.writers(self, :to_a, %i[
      collect! compact! concat delete delete_at delete_if fill filter! flatten! insert
      keep_if map! prepend reject! reverse! rotate! select! shuffle! slice! sort! sort_by!
      uniq! unshift
    ])
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

    SharedMethods.comparisons(self, plain: Hash, copy: :to_h, implicit: :to_hash, cycle: "{...}")

    # A shared Hash never compares by identity nor has a default proc (neither converts).
    def compare_by_identity? = false
    def default_proc = nil
    def to_proc = ->(k) { self[k] }

    SharedMethods.readers(self, :to_h, %i[
      < <= > >= any? assoc count deconstruct_keys filter_map find_all flatten group_by
      invert merge min_by max_by partition rassoc reject select filter slice except sort_by
      sum to_a transform_keys transform_values
    ])

    SharedMethods.writers(self, :to_h, %i[
      compact! compare_by_identity default= default_proc= delete_if filter! keep_if merge!
      rehash reject! select! shift transform_keys! transform_values! update
    ])
  end
end
