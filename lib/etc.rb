# frozen_string_literal: true
# Etc: the user and group databases, read from /etc/passwd and /etc/group (the "files"
# source of nsswitch; users known only to NIS/LDAP are not found).
module Etc
  Passwd = Struct.new(:name, :passwd, :uid, :gid, :gecos, :dir, :shell)
  Group = Struct.new(:name, :passwd, :gid, :mem)

  class << self
    def passwd_entries
      File.readlines("/etc/passwd", chomp: true).filter_map do |line|
        next if line.empty? || line.start_with?("#")
        name, pw, uid, gid, gecos, dir, shell = line.split(":", -1)
        Passwd.new(name, pw, uid.to_i, gid.to_i, gecos, dir, shell)
      end
    rescue SystemCallError
      []
    end
    private :passwd_entries

    def group_entries
      File.readlines("/etc/group", chomp: true).filter_map do |line|
        next if line.empty? || line.start_with?("#")
        name, pw, gid, mem = line.split(":", -1)
        Group.new(name, pw, gid.to_i, (mem || "").split(","))
      end
    rescue SystemCallError
      []
    end
    private :group_entries

    # The login name: $USER as CRuby's getlogin fallback does, else the name of the real uid.
    def getlogin
      ENV["USER"] || getpwuid(Process.uid)&.name
    end

    def getpwnam(name)
      name = String(name)
      passwd_entries.find { |e| e.name == name } or raise ArgumentError, "can't find user for #{name}"
    end

    def getpwuid(uid = Process.uid)
      uid = Integer(uid)
      passwd_entries.find { |e| e.uid == uid } or raise ArgumentError, "can't find user for #{uid}"
    end

    def getgrnam(name)
      name = String(name)
      group_entries.find { |e| e.name == name } or raise ArgumentError, "can't find group for #{name}"
    end

    def getgrgid(gid = Process.gid)
      gid = Integer(gid)
      group_entries.find { |e| e.gid == gid } or raise ArgumentError, "can't find group for #{gid}"
    end

    def systmpdir
      "/tmp"
    end
  end
end
