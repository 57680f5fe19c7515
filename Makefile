# SPDX-License-Identifier: GPL-2.0
# Entry points of the task-isolation fork.  Every target is a thin wrapper
# around a script in tools/ (each has --help).  Build outputs live in
# $(BUILD) (default ./build, outside git); caches in ~/.cache/task-isolation.

BUILD ?= $(if $(O),$(O),$(CURDIR)/build)
# The test architectures: the rows of tools/arches (the first is the default).
ARCHES := $(shell sed -e 's/\#.*//' tools/arches | awk 'NF { print $$1 }')
ARCH ?= $(firstword $(ARCHES))
# What 'make check' boots: arch:config, from the "check" column of tools/arches.
CHECK_RUNS := $(shell bash -c '. tools/lib.sh && check_runs')
CONFIG ?= default
# make stress: seconds of entering and leaving isolation, then of one hold
STRESS ?= 300
STRESS_HOLD ?= 600
export BUILD FORCE SUBMITTER SEND

.DEFAULT_GOAL := all
.PHONY: all help deps tree save rebase kernel rootfs boot-test boot-check boot-watchdog boot-domain check \
	entry-rules-test \
	check-arm check-debug check-workflow patches checkpatch recipients send am-check \
	bisect-check selftest-check bench soak stress clean

all: deps tree patches ## the main job: pinned tree, series replayed, exported as mail

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / { printf "  %-15s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo "  variables: BUILD=dir (or O=), ARCH=$(subst $(eval) ,|,$(ARCHES)), CONFIG=default|debug|debian|debian-rt,"
	@echo "             VERSION=<debian version> (rebase), FORCE=1 (drop unsaved work, with backup)"
	@echo "             QUICK=1 (bench: 10 s window, x86_64 only), DURATION=s (soak, default 600)"

deps: ## install the Debian packages the workflow needs (root)
	tools/deps.sh

tree: ## prepare $(BUILD)/linux: pinned base + topic bundles replayed
	tools/tree.sh

save: ## write changed topic branches back to topic-branches/*.bundle
	tools/save.sh

rebase: ## move the series to VERSION=<debian version> of the package
	@test -n "$(VERSION)" || { echo "usage: make rebase VERSION=<debian version>" >&2; exit 2; }
	tools/rebase.sh "$(VERSION)"

kernel: ## build the test kernel for ARCH (CONFIG=default|debug|debian|debian-rt)
	tools/kernel.sh --arch $(ARCH) --config $(CONFIG)

rootfs: ## build or reuse the cached Debian 12 guest image for ARCH
	tools/rootfs.sh --arch $(ARCH) --config $(CONFIG)

boot-test: ## boot ARCH's kernel under QEMU and run the selftest suite
	tools/boot-test.sh --arch $(ARCH) --config $(CONFIG)

check-workflow: ## prove the fork workflow (determinism, replay, safety)
	tools/check-workflow.sh

boot-check: ## kernel + rootfs + boot-test for ARCH, in that order
	$(MAKE) kernel
	$(MAKE) rootfs
	$(MAKE) boot-test

boot-watchdog: ## x86_64: the tests that need the TSC watched or kPTI off, in a boot without tsc=nowatchdog, with pti=off (see tools/arches)
	tools/boot-test.sh --arch x86_64 --config $(CONFIG) --bootargs "pti=off" \
		--tests "clocksource_watchdog_skips_isolated clocksource_watchdog_visits_nohz_full \
			 isolation_without_admin_steps \
			 flush_reaches_isolated_cpu vfree_churn_while_isolated huge_vmap_settles_owed_flush \
			 huge_vunmap_purge_flushes_at_once"

boot-domain: ## the tests of a CPU isolated from the scheduler domains only (no nohz_full), in a boot that has one: --isolate 1-2 --domain-only 3, two NUMA nodes
	tools/boot-test.sh --arch x86_64 --config $(CONFIG) --isolate 1-2 --domain-only 3 \
		--tests "domain_isolated_cpu_pulls_no_timers isolation_holds"

entry-rules-test: tree ## the checkers of the entry-code rule (x86 objtool noinstr keys, arm64 el0 calls) on fabricated objects and the built kernels
	tools/entry-rules-test.sh

check: deps tree ## the test command: workflow checks, then a boot test per architecture and config (the check column of tools/arches), then boot-watchdog and boot-domain
	tools/check-workflow.sh
	tools/selftest-sync.sh --check
	$(MAKE) checkpatch
	for r in $(CHECK_RUNS); do $(MAKE) boot-check ARCH=$${r%%:*} CONFIG=$${r#*:} || exit 1; done
	tools/entry-rules-test.sh
	$(MAKE) boot-watchdog CONFIG=debian
	$(MAKE) boot-domain CONFIG=debian

patches: tree ## format-patch each mail series (cover-letter.txt, cover-letters/) into $(BUILD)/patches/, signed off by you
	tools/patches.sh

checkpatch: patches ## scripts/checkpatch.pl --strict on every patch (allow-list: checkpatch-allow.txt)
	tools/checkpatch.sh

recipients: patches ## per-patch To:/Cc: from scripts/get_maintainer.pl into <series>/recipients.txt
	tools/recipients.sh

send: recipients ## the exact mails in $(BUILD)/patches/<series>/mail/*.eml; SEND=1 sends them (git send-email)
	tools/send.sh

am-check: patches ## the patches apply with git am onto the pinned base, same trees
	tools/am-check.sh

bisect-check: tree ## build every commit for every architecture (W=1 on touched files)
	tools/bisect-check.sh

selftest-check: tree ## the in-tree kselftest equals test/ and builds with kselftest make
	tools/selftest-sync.sh --check
	tools/selftest-sync.sh --build

bench: deps tree ## benchmark: the series vs stock 6.12, quality and cost (QUICK=1: short run)
	tools/bench.sh $(if $(filter 1,$(QUICK)),--quick)

soak: deps tree ## DURATION s (default 600) of isolated tasks under load, stock vs series, Debian config, 2 nodes (x86_64, arm64)
	tools/soak.sh $(if $(DURATION),--duration $(DURATION)) $(if $(filter command line,$(origin ARCH)),--arch "$(ARCH)")

check-debug: deps tree ## debug kernels (lockdep, KASAN, noinstr objtool) boot-tested on every architecture
	tools/check-debug.sh $(if $(filter command line,$(origin ARCH)),--arch "$(ARCH)")

stress: deps tree ## ARCH's kernel under stress for STRESS s, then one isolated task held STRESS_HOLD s under load
	$(MAKE) kernel
	$(MAKE) rootfs
	tools/boot-test.sh --arch $(ARCH) --config $(CONFIG) --stress $(STRESS) --stress-hold $(STRESS_HOLD)

check-arm: deps tree ## only the 32-bit arm boot test
	$(MAKE) boot-check ARCH=arm

clean: ## remove kernel objects (keeps the tree, the base import and caches)
	rm -rf $(BUILD)/obj $(BUILD)/boot
