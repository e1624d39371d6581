#!/bin/sh
# A namespace file: `sluice apply` stores files/scripts/greet.sh as scripts/greet.sh,
# and every task run of the namespace finds it in its working directory.
echo "hello from $(basename "$0"), ${1:-world}"
