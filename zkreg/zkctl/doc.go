// Package zkctl implements `yrpcc ctl`, the governance client of yrpc
// services registered in ZooKeeper: it lists providers, consumers and
// config (ls) and writes the config that running processes watch (drain,
// undrain, weight, limit, mock). Writes go through zkreg's compare-and-set
// UpdateConfig, so concurrent operators never lose each other's changes.
//
//	yrpcc ctl ls
//	yrpcc ctl -zk 10.0.0.5:2181 drain users.Users 10.0.0.1:7001 --group HK
//	yrpcc ctl mock users.Users Create fail Unavailable "maintenance" --force --for 10m
package zkctl
