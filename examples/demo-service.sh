#!/bin/sh
# A stand-in for a legacy service that cannot be changed: it "serves" a
# request every half second, and on SIGTERM or SIGINT it finishes its
# in-flight work (two seconds) before it exits. It knows nothing of
# readiness, drain delays or deadlines: lfinit adds those.
n=0
stopping=0
on_stop() {
	[ "$stopping" = 1 ] && { echo "demo-service: second stop signal, exiting now"; exit 130; }
	stopping=1
	echo "demo-service: stop signal received, finishing in-flight requests (2s)..."
}
trap on_stop TERM INT
echo "demo-service: started, pid $$"
while [ "$stopping" = 0 ]; do
	n=$((n + 1))
	echo "demo-service: served request $n"
	sleep 0.5
done
sleep 2
echo "demo-service: done, exiting 0"
exit 0
