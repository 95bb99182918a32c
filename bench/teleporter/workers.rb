# The master/worker HTML application of the Teleporter seed (fig. 13), one column of
# `bench/teleporter/run workers`. Runs under Carmine and under CRuby.
#
#   workers.rb TRANSPORT WORKERS COPIES [LINES]
#
# The master sends LINES address lines (generated here, deterministically) to WORKERS forked
# workers, which turn each into an HTML table row (COPIES times over: the paper's "(1)" and
# "(100)" series) and send it back; with 0 workers the master renders them itself.
# TRANSPORT: tunnel (one Teleporter::Tunnel of tasks shared by every worker, one of results:
# the paper's fig. 2), pipe (IO.pipe + Marshal, a pair of pipes per worker, tasks dealt round
# robin, since a pipe cannot be shared between readers). In both, a thread of the master
# sends every task while its main thread receives the results, so neither side waits for
# the other's buffer. Prints "TRANSPORT<TAB>WORKERS<TAB>COPIES<TAB>seconds<TAB>lines per
# second<TAB>checksum" (the checksum, the total bytes of HTML received, is the same for every
# transport and worker count, or the run is wrong).

PREFECTURES = %w[北海道 青森県 岩手県 宮城県 秋田県 山形県 福島県 茨城県 栃木県 群馬県 埼玉県 千葉県
                 東京都 神奈川県 新潟県 富山県 石川県 福井県 山梨県 長野県 岐阜県 静岡県 愛知県 三重県
                 滋賀県 京都府 大阪府 兵庫県 奈良県 和歌山県 鳥取県 島根県 岡山県 広島県 山口県 徳島県
                 香川県 愛媛県 高知県 福岡県 佐賀県 長崎県 熊本県 大分県 宮崎県 鹿児島県 沖縄県].freeze
SYLLABLES = %w[カ キ ク ケ コ サ シ ス セ ソ タ チ ツ テ ト ナ ニ ヌ ネ ノ ハ ヒ フ ヘ ホ マ ミ ム メ モ ヤ ユ ヨ
               ラ リ ル レ ロ ワ ン].freeze
KANJI = %w[山 川 田 中 本 木 村 町 野 原 井 上 下 大 小 東 西 南 北 新 橋 島 沢 谷 浜 松 竹 梅 森 林].freeze

# `n` lines in the shape of Japan Post's postal-code list ("zip,prefecture,city,town,kana"),
# from a fixed linear congruential generator: the same lines for every run and every Ruby.
def address_lines(n)
  seed = 12_345
  rand = lambda do |m|
    seed = (seed * 1_103_515_245 + 12_345) % 2**31
    seed % m
  end
  word = ->(list, k) { Array.new(k) { list[rand.(list.size)] }.join }
  Array.new(n) do |i|
    zip = format("%07d", rand.(10_000_000))
    town = word.(KANJI, 2 + rand.(3))
    # Some names carry characters HTML must escape.
    town += ["", "", "", "&#{word.(KANJI, 1)}", "<#{i % 10}>", "\"#{word.(KANJI, 1)}\""][rand.(6)]
    [zip, PREFECTURES[rand.(PREFECTURES.size)], "#{word.(KANJI, 2)}市", town, word.(SYLLABLES, 4 + rand.(6))].join(",")
  end
end

ESCAPES = { "&" => "&amp;", "<" => "&lt;", ">" => "&gt;", '"' => "&quot;" }.freeze
ROMAJI = SYLLABLES.zip(%w[ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho
                          ma mi mu me mo ya yu yo ra ri ru re ro wa n]).to_h.freeze

def escape(s)
  s.gsub(/[&<>"]/, ESCAPES)
end

# Percent-encoding of a query value (as URI.encode_www_form_component).
def url_encode(s)
  s.b.gsub(/[^a-zA-Z0-9_.\-~]/n) { |c| format("%%%02X", c.ord) }
end

# One address line as an HTML fragment (a table row with a map link, the reading in kana
# and in Latin letters), `copies` times.
def render(line, copies)
  zip, pref, city, town, kana = line.split(",")
  address = "#{pref}#{city}#{town}"
  romaji = kana.each_char.map { |c| ROMAJI.fetch(c, "?") }.join.capitalize
  row = +"<tr class=\"address\" data-zip=\"#{zip}\">"
  row << "<td class=\"zip\">〒#{zip[0, 3]}-#{zip[3, 4]}</td>"
  row << "<td class=\"pref\">#{escape(pref)}</td><td class=\"city\">#{escape(city)}</td>"
  row << "<td class=\"town\">#{escape(town)}</td>"
  row << "<td class=\"kana\"><ruby>#{escape(kana)}<rt>#{romaji}</rt></ruby></td>"
  row << "<td><a href=\"https://maps.example.com/?q=#{url_encode(address)}&amp;zip=#{zip}\">#{escape(address)}</a></td></tr>\n"
  copies == 1 ? row : row * copies
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

transport, workers, copies, lines = ARGV
workers = Integer(workers)
copies = Integer(copies)
lines = Integer(lines || ENV.fetch("LINES", "20000"))
tasks = address_lines(lines)
total = 0
t0 = now

if workers == 0
  tasks.each { |l| total += render(l, copies).bytesize }
elsif transport == "tunnel"
  require "teleporter"
  # Room for every queued task and a good share of the replies.
  jobs = Teleporter::Tunnel.new(capacity: 16 << 20)
  results = Teleporter::Tunnel.new(capacity: 64 << 20)
  pids = Array.new(workers) do
    fork do
      begin
        loop { results.send(render(jobs.recv, copies)) }
      rescue StopIteration
      end
      exit!(0)
    end
  end
  sender = Thread.new do
    tasks.each { |l| jobs.send(l) }
    jobs.close
  end
  lines.times { total += results.recv.bytesize }
  sender.join
  pids.each { |pid| Process.wait(pid) }
elsif transport == "pipe"
  peers = Array.new(workers) do
    task_r, task_w = IO.pipe
    res_r, res_w = IO.pipe
    pid = fork do
      task_w.close
      res_r.close
      begin
        loop { Marshal.dump(render(Marshal.load(task_r), copies), res_w) }
      rescue EOFError
      end
      res_w.close
      exit!(0)
    end
    task_r.close
    res_w.close
    [pid, task_w, res_r]
  end
  sender = Thread.new do
    tasks.each_with_index { |l, i| Marshal.dump(l, peers[i % workers][1]) }
    peers.each { |_, w, _| w.close }
  end
  # Each worker answers its tasks in the order it got them: task i's reply comes from
  # worker i % workers, after that worker's earlier replies.
  lines.times { |i| total += Marshal.load(peers[i % workers][2]).bytesize }
  sender.join
  peers.each { |pid, _, r| r.close; Process.wait(pid) }
else
  abort "unknown transport #{transport}"
end

secs = now - t0
puts [transport, workers, copies, format("%.4f", secs), format("%.0f", lines / secs), total].join("\t")
