# frozen_string_literal: true
#
# fcntl: the Fcntl constants for IO#fcntl, written in Ruby for Carmine. The open(2)
# flags come from File::Constants; the fcntl(2) commands are Linux's values.

module Fcntl
  F_DUPFD = 0
  F_GETFD = 1
  F_SETFD = 2
  F_GETFL = 3
  F_SETFL = 4
  F_GETLK = 5
  F_SETLK = 6
  F_SETLKW = 7
  FD_CLOEXEC = 1
  F_RDLCK = 0
  F_WRLCK = 1
  F_UNLCK = 2
  F_DUPFD_CLOEXEC = 1030
  F_GETPIPE_SZ = 1032
  F_SETPIPE_SZ = 1031
  O_CREAT = File::Constants::CREAT
  O_EXCL = File::Constants::EXCL
  O_NOCTTY = File::Constants::NOCTTY
  O_TRUNC = File::Constants::TRUNC
  O_APPEND = File::Constants::APPEND
  O_NONBLOCK = File::Constants::NONBLOCK
  O_NDELAY = File::Constants::NONBLOCK
  O_RDONLY = File::Constants::RDONLY
  O_RDWR = File::Constants::RDWR
  O_WRONLY = File::Constants::WRONLY
  O_ACCMODE = O_RDONLY | O_WRONLY | O_RDWR
  VERSION = "1.0.1"
end
