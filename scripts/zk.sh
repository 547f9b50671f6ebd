#!/usr/bin/env bash
# zk.sh: a throwaway standalone ZooKeeper on 127.0.0.1 for yrpc's tests.
#
# As a command:
#   eval "$(scripts/zk.sh start)"   # starts it; exports YRPC_ZK and YRPC_ZK_DIR
#   scripts/zk.sh stop              # stops the server of $YRPC_ZK_DIR and removes its data
# As a library (scripts/test.sh): source it, then zk_install, zk_start, zk_stop.
#
# Uses Debian's `zookeeper` package (installed by zk_install when missing;
# needs root or sudo) and the Java it depends on. The server gets a fresh
# data dir (mktemp -d), port 2181 or a free one if 2181 is taken, no admin
# server, and the four-letter words ruok/srvr/stat/cons.

ZK_JAR=/usr/share/java/zookeeper.jar

zk_log() { echo "zk.sh: $*" >&2; }

# zk_install installs Debian's zookeeper package if it is missing.
zk_install() {
	if [[ -f $ZK_JAR ]] && command -v java >/dev/null; then
		return 0
	fi
	zk_log "installing Debian's zookeeper package"
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null || { zk_log "need root (or sudo) to apt-get install zookeeper"; return 1; }
		sudo=(sudo -n)
	fi
	"${sudo[@]}" apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q zookeeper >&2
	[[ -f $ZK_JAR ]] || { zk_log "$ZK_JAR missing after install"; return 1; }
}

# zk_port_open PORT: is something listening on 127.0.0.1:PORT?
zk_port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# zk_4lw PORT WORD: send a four-letter word, print the answer.
zk_4lw() {
	local port=$1 word=$2 answer
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf '%s' "$word" >&3
	answer=$(timeout 2 cat <&3) || true
	exec 3>&-
	printf '%s' "$answer"
}

# zk_free_port prints 2181 if free, else a free port.
zk_free_port() {
	local port=2181 i
	for ((i = 0; i < 100; i++)); do
		if ! zk_port_open "$port"; then
			echo "$port"
			return 0
		fi
		port=$((20000 + RANDOM % 30000))
	done
	zk_log "no free port found"
	return 1
}

# zk_start starts the server and waits (bounded) until it serves requests
# (ruok answers as soon as the process runs; srvr shows "Mode:" only once
# the server serves).
# Sets and exports YRPC_ZK (127.0.0.1:PORT) and YRPC_ZK_DIR.
zk_start() {
	local dir port cp i
	dir=$(mktemp -d "${TMPDIR:-/tmp}/yrpc-zk.XXXXXX")
	port=$(zk_free_port)
	mkdir -p "$dir/data"
	cat >"$dir/zoo.cfg" <<-CFG
		tickTime=500
		initLimit=10
		syncLimit=5
		dataDir=$dir/data
		clientPort=$port
		clientPortAddress=127.0.0.1
		maxClientCnxns=0
		admin.enableServer=false
		4lw.commands.whitelist=ruok,srvr,stat,cons
		minSessionTimeout=1000
		maxSessionTimeout=60000
		CFG
	cp=$ZK_JAR
	[[ -f /usr/share/java/slf4j-simple.jar ]] && cp+=:/usr/share/java/slf4j-simple.jar
	java -Xmx256m -cp "$cp" -Dzookeeper.admin.enableServer=false \
		org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" >"$dir/zookeeper.log" 2>&1 &
	echo $! >"$dir/pid"
	for ((i = 0; i < 300; i++)); do # up to 60s
		if [[ $(zk_4lw "$port" srvr 2>/dev/null) == *"Mode: "* ]]; then
			export YRPC_ZK=127.0.0.1:$port YRPC_ZK_DIR=$dir
			zk_log "ZooKeeper answers on $YRPC_ZK (pid $(cat "$dir/pid"), data $dir)"
			return 0
		fi
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			break
		fi
		sleep 0.2
	done
	zk_log "ZooKeeper did not start; log follows"
	tail -n 30 "$dir/zookeeper.log" >&2 || true
	YRPC_ZK_DIR=$dir zk_stop
	return 1
}

# zk_stop stops the server started in $YRPC_ZK_DIR and removes the dir.
zk_stop() {
	local dir=${YRPC_ZK_DIR:-} pid i
	[[ -n $dir && -d $dir ]] || return 0
	if [[ -f $dir/pid ]]; then
		pid=$(cat "$dir/pid")
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	case ${1:-} in
	start)
		zk_install
		zk_start
		echo "export YRPC_ZK=$YRPC_ZK YRPC_ZK_DIR=$YRPC_ZK_DIR"
		;;
	stop) zk_stop ;;
	*)
		echo "usage: $0 start|stop" >&2
		exit 2
		;;
	esac
fi
