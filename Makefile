# openclaw-talk: two set-up commands, `make demo` and `make test`, work on a fresh Debian 12 machine.
SWIFT ?= swift
CONFIG ?= debug
BIN = .build/$(CONFIG)/openclaw-talk
DEMO_CLIP ?= /usr/share/pocketsphinx/test/data/goforward.raw

.PHONY: all deps build release test demo bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build -c $(CONFIG)

release:
	$(MAKE) build CONFIG=release

# Tests run against a private headless PulseAudio that is stopped afterwards, also when tests fail.
# The CPU-heavy recognition suites run in a second pass: on 2 cores they would otherwise starve the
# timing-sensitive audio and network tests that Swift Testing runs beside them.
# Each pass has a hard time limit, so a hung test fails the run instead of stalling CI.
HEAVY_TESTS = SpeechRecognitionTests
# PulseAudio's module-echo-cancel test runs on its own: among all the other suites its server stopped answering.
SOLO_TESTS = PulseEchoCancelModuleTests
TEST_TIME_LIMIT ?= 900
test: deps
	$(SWIFT) build --build-tests
	scripts/with-pulse.sh timeout $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build --skip '$(HEAVY_TESTS)|$(SOLO_TESTS)'
	scripts/with-pulse.sh timeout $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build --filter '$(HEAVY_TESTS)'
	scripts/with-pulse.sh timeout $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build --filter '$(SOLO_TESTS)'
	python3 -m unittest discover -s tools/reference-gateway -t tools/reference-gateway

demo: deps
	$(SWIFT) build -c release
	scripts/demo.sh .build/release/openclaw-talk

bench: deps
	$(SWIFT) build -c release
	scripts/with-pulse.sh scripts/bench.sh .build/release/openclaw-talk

clean:
	rm -rf .build out
