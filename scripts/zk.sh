#!/usr/bin/env bash
# zk.sh: throwaway ZooKeeper servers on 127.0.0.1 for yrpc's tests: a
# standalone server and a three-node ensemble.
#
# As a command:
#   eval "$(scripts/zk.sh start)"            # standalone; exports YRPC_ZK and YRPC_ZK_DIR
#   scripts/zk.sh stop                       # stops the server of $YRPC_ZK_DIR, removes its data
#   eval "$(scripts/zk.sh ensemble-start)"   # ensemble; exports YRPC_ZK_ENSEMBLE and YRPC_ZK_ENSEMBLE_DIR
#   scripts/zk.sh ensemble-status            # each node of $YRPC_ZK_ENSEMBLE_DIR: id, address, pid, mode
#   scripts/zk.sh ensemble-stop              # stops every node of $YRPC_ZK_ENSEMBLE_DIR, removes its data
# As a library (scripts/test.sh): source it, then zk_install, zk_start,
# zk_stop, zk_ensemble_start (or zk_ensemble_launch, other work, then
# zk_ensemble_ready), zk_ensemble_stop.
#
# Uses Debian's `zookeeper` package (installed by zk_install when missing;
# needs root or sudo) and the Java it depends on. Every server gets fresh
# data dirs (mktemp -d), no admin server, the four-letter words
# ruok/srvr/stat/cons, tickTime 500ms (sessions of 1s to 60s), no fsync
# (forceSync=no: a killed server loses nothing the kernel has; only a
# machine crash would), timestamps in its log, and a small JVM (128 MiB
# heap, serial GC, C1 only) that starts in about half a second.
#
# The standalone server listens on port 2181, or a free one if 2181 is taken.
#
# The ensemble has three nodes; node i (myid i) is the i-th address of
# YRPC_ZK_ENSEMBLE ("127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3") and lives in
# $YRPC_ZK_ENSEMBLE_DIR/n<i>/: zoo.cfg, data/myid, zookeeper.log, pid (the
# JVM's process id) and run.sh, which starts the node again (it writes pid
# and execs the JVM; internal/zktest runs it after killing a node). Client,
# quorum and election ports are nine distinct free ports below the
# kernel's ephemeral range. `srvr` on a node's client port answers
# "Mode: leader" or "Mode: follower" while the node serves. zk_ensemble_start
# (and zk_ensemble_ready) returns once every node serves and one leads. Tests that kill
# nodes take an exclusive flock on $YRPC_ZK_ENSEMBLE_DIR/lock, and tests
# that only use the ensemble a shared one (internal/zktest does both).
#
# Elections are tuned so that losing the leader costs a second or two, not
# up to ten, under load: a follower that picks the new leader before the
# leader listens retries for 1.6s (leaderConnectDelayDuringRetryMs=400, 5
# tries; ZooKeeper's 100ms gives up after 0.4s), a leader whose followers
# never come gives up after initLimit=4 ticks (2s, not 5s), and election
# rounds back off to 1s at most (fastleader.maxNotificationInterval; not
# 60s). Measured with two busy loops beside the fault suite: the two
# survivors serve with a new leader 0.9-3.3s after the leader's SIGKILL
# (up to 8.8s before the tuning).

ZK_JAR=/usr/share/java/zookeeper.jar
ZK_JVM_OPTS=(-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Dzookeeper.admin.enableServer=false
	-Dzookeeper.fastleader.maxNotificationInterval=1000 -Dzookeeper.leaderConnectDelayDuringRetryMs=400
	-Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS)

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

# zk_classpath prints the server's class path.
zk_classpath() {
	local cp=$ZK_JAR
	[[ -f /usr/share/java/slf4j-simple.jar ]] && cp+=:/usr/share/java/slf4j-simple.jar
	printf '%s' "$cp"
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

# zk_mode PORT prints the mode a server reports ("leader", "follower",
# "standalone"), or nothing while it does not serve.
zk_mode() {
	local line
	line=$(zk_4lw "$1" srvr 2>/dev/null | grep '^Mode: ') || return 0
	printf '%s' "${line#Mode: }"
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

# zk_free_ports N prints N distinct ports in 20000-32767 (below the
# kernel's usual ephemeral range, so outgoing connections do not hold them)
# on which nothing listens.
zk_free_ports() {
	local n=$1 port i
	local -A taken=()
	for ((i = 0; i < 1000 && ${#taken[@]} < n; i++)); do
		port=$((20000 + RANDOM % 12768))
		[[ -n ${taken[$port]:-} ]] && continue
		zk_port_open "$port" && continue
		taken[$port]=1
		echo "$port"
	done
	((${#taken[@]} == n)) || { zk_log "not enough free ports"; return 1; }
}

# zk_config DIR PORT writes DIR/zoo.cfg for a server with data in DIR/data
# and clients on 127.0.0.1:PORT; quorum settings may follow on stdin.
zk_config() {
	local dir=$1 port=$2
	mkdir -p "$dir/data"
	{
		cat <<-CFG
			tickTime=500
			initLimit=4
			syncLimit=5
			dataDir=$dir/data
			clientPort=$port
			clientPortAddress=127.0.0.1
			maxClientCnxns=0
			admin.enableServer=false
			4lw.commands.whitelist=ruok,srvr,stat,cons
			minSessionTimeout=1000
			maxSessionTimeout=60000
			forceSync=no
		CFG
		cat
	} >"$dir/zoo.cfg"
}

# zk_launcher DIR MAIN writes DIR/run.sh, which records its pid in DIR/pid
# and execs the server class MAIN on DIR/zoo.cfg, appending to
# DIR/zookeeper.log.
zk_launcher() {
	local dir=$1 main=$2
	cat >"$dir/run.sh" <<-SH
		#!/bin/sh
		# Starts the ZooKeeper server of this directory (written by scripts/zk.sh).
		echo \$\$ >'$dir/pid'
		exec java ${ZK_JVM_OPTS[*]} -cp '$(zk_classpath)' $main '$dir/zoo.cfg' >>'$dir/zookeeper.log' 2>&1
	SH
	chmod +x "$dir/run.sh"
}

# zk_kill_dirs DIR... stops the servers whose pid files are in DIR...
# (SIGTERM, SIGKILL after 10s), all at once.
zk_kill_dirs() {
	local d pid i pids=()
	for d in "$@"; do
		[[ -f $d/pid ]] || continue
		pid=$(cat "$d/pid")
		kill "$pid" 2>/dev/null && pids+=("$pid")
	done
	for ((i = 0; i < 100; i++)); do
		local alive=()
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive+=("$pid")
		done
		pids=("${alive[@]}")
		((${#pids[@]} == 0)) && return 0
		sleep 0.1
	done
	kill -9 "${pids[@]}" 2>/dev/null || true
}

# zk_start starts the standalone server and waits (bounded) until it serves
# requests (ruok answers as soon as the process runs; srvr shows "Mode:"
# only once the server serves).
# Sets and exports YRPC_ZK (127.0.0.1:PORT) and YRPC_ZK_DIR.
zk_start() {
	local dir port i
	dir=$(mktemp -d "${TMPDIR:-/tmp}/yrpc-zk.XXXXXX")
	port=$(zk_free_port)
	zk_config "$dir" "$port" </dev/null
	zk_launcher "$dir" org.apache.zookeeper.server.ZooKeeperServerMain
	"$dir/run.sh" &
	for ((i = 0; i < 300; i++)); do # up to 60s
		if [[ -n $(zk_mode "$port") ]]; then
			export YRPC_ZK=127.0.0.1:$port YRPC_ZK_DIR=$dir
			zk_log "ZooKeeper answers on $YRPC_ZK (pid $(cat "$dir/pid"), data $dir)"
			return 0
		fi
		if [[ -f $dir/pid ]] && ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
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
	local dir=${YRPC_ZK_DIR:-}
	[[ -n $dir && -d $dir ]] || return 0
	zk_kill_dirs "$dir"
	rm -rf "$dir"
}

# zk_ensemble_start starts a three-node ensemble and waits (bounded) until
# every node serves and one leads: zk_ensemble_launch, then
# zk_ensemble_ready. Sets and exports YRPC_ZK_ENSEMBLE and
# YRPC_ZK_ENSEMBLE_DIR.
zk_ensemble_start() {
	zk_ensemble_launch && zk_ensemble_ready
}

# zk_ensemble_launch writes the three nodes' dirs and starts them without
# waiting, so that a caller can do other work while they elect a leader.
# Sets and exports YRPC_ZK_ENSEMBLE and YRPC_ZK_ENSEMBLE_DIR.
zk_ensemble_launch() {
	local dir ports servers="" addrs="" i j
	ZK_ENSEMBLE_LAUNCHED=$SECONDS
	dir=$(mktemp -d "${TMPDIR:-/tmp}/yrpc-zkens.XXXXXX")
	: >"$dir/lock"
	mapfile -t ports < <(zk_free_ports 9)
	((${#ports[@]} == 9)) || { rm -rf "$dir"; return 1; }
	for i in 1 2 3; do # client port ports[3(i-1)], quorum +1, election +2
		j=$((3 * (i - 1)))
		servers+="server.$i=127.0.0.1:${ports[j + 1]}:${ports[j + 2]}"$'\n'
		addrs+="${addrs:+,}127.0.0.1:${ports[j]}"
	done
	for i in 1 2 3; do
		printf '%s' "$servers" | zk_config "$dir/n$i" "${ports[3 * (i - 1)]}"
		echo "$i" >"$dir/n$i/data/myid"
		zk_launcher "$dir/n$i" org.apache.zookeeper.server.quorum.QuorumPeerMain
		"$dir/n$i/run.sh" &
	done
	export YRPC_ZK_ENSEMBLE=$addrs YRPC_ZK_ENSEMBLE_DIR=$dir
}

# zk_ensemble_ready waits (bounded) until every node of the launched
# ensemble serves and one leads. If a node fails to start (a port taken
# meanwhile), it logs the nodes' log tails and launches a new ensemble on
# other ports, twice at most.
zk_ensemble_ready() {
	local try i port
	for try in 1 2 3; do
		if zk_ensemble_wait "$YRPC_ZK_ENSEMBLE_DIR" 60; then
			zk_log "ZooKeeper ensemble answers on $YRPC_ZK_ENSEMBLE $((SECONDS - ZK_ENSEMBLE_LAUNCHED))s after its launch (data $YRPC_ZK_ENSEMBLE_DIR)"
			return 0
		fi
		zk_log "ensemble start $try of 3 failed"
		while read -r i port; do
			zk_log "node $i (port $port) log tail:"
			tail -n 15 "$YRPC_ZK_ENSEMBLE_DIR/n$i/zookeeper.log" >&2 || true
		done < <(zk_ensemble_nodes "$YRPC_ZK_ENSEMBLE_DIR")
		zk_ensemble_stop
		((try < 3)) && { zk_ensemble_launch || return 1; }
	done
	unset YRPC_ZK_ENSEMBLE YRPC_ZK_ENSEMBLE_DIR
	return 1
}

# zk_ensemble_nodes DIR prints "id port" for each node of the ensemble in
# DIR.
zk_ensemble_nodes() {
	local n port
	for n in "$1"/n*/; do
		port=$(sed -n 's/^clientPort=//p' "$n/zoo.cfg")
		echo "$(cat "$n/data/myid") $port"
	done
}

# zk_ensemble_wait DIR SECONDS waits until every node of the ensemble in
# DIR serves and exactly one leads; it fails when a node exits.
zk_ensemble_wait() {
	local dir=$1 limit=$2 i id port mode leaders serving nodes
	nodes=$(zk_ensemble_nodes "$dir")
	for ((i = 0; i < limit * 5; i++)); do
		leaders=0 serving=0
		while read -r id port; do
			mode=$(zk_mode "$port")
			[[ $mode == leader ]] && leaders=$((leaders + 1))
			[[ $mode == leader || $mode == follower ]] && serving=$((serving + 1))
			if [[ -f $dir/n$id/pid ]] && ! kill -0 "$(cat "$dir/n$id/pid")" 2>/dev/null; then
				zk_log "ensemble node $id exited"
				return 1
			fi
		done <<<"$nodes"
		((serving == 3 && leaders == 1)) && return 0
		sleep 0.2
	done
	zk_log "ensemble not serving after ${limit}s"
	return 1
}

# zk_ensemble_status prints each node of $YRPC_ZK_ENSEMBLE_DIR: id,
# address, pid and mode ("-" while it does not serve).
zk_ensemble_status() {
	local dir=${YRPC_ZK_ENSEMBLE_DIR:?} id port mode
	while read -r id port; do
		mode=$(zk_mode "$port")
		echo "node $id 127.0.0.1:$port pid $(cat "$dir/n$id/pid" 2>/dev/null) mode ${mode:--}"
	done < <(zk_ensemble_nodes "$dir")
}

# zk_ensemble_stop stops every node of $YRPC_ZK_ENSEMBLE_DIR (including
# nodes that tests restarted: their run.sh rewrote the pid file) and
# removes the dir.
zk_ensemble_stop() {
	local dir=${YRPC_ZK_ENSEMBLE_DIR:-}
	[[ -n $dir && -d $dir ]] || return 0
	zk_kill_dirs "$dir"/n*
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
	ensemble-start)
		zk_install
		zk_ensemble_start
		echo "export YRPC_ZK_ENSEMBLE=$YRPC_ZK_ENSEMBLE YRPC_ZK_ENSEMBLE_DIR=$YRPC_ZK_ENSEMBLE_DIR"
		;;
	ensemble-status) zk_ensemble_status ;;
	ensemble-stop) zk_ensemble_stop ;;
	*)
		echo "usage: $0 start|stop|ensemble-start|ensemble-status|ensemble-stop" >&2
		exit 2
		;;
	esac
fi
