# HomeApps: CribCall and its sibling products. `make demo` and `make test` work on a fresh Debian 12 machine as
# root with Swift 6.3 at /opt/swift; they install what is missing (idempotently) and skip what is present.

SHELL := /bin/bash
.DEFAULT_GOAL := help
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
VENV := .venv
PYTHON := $(VENV)/bin/python
# Debian packages the tests need: independent peers and tools (grows with later capabilities).
APT_BUILD_PACKAGES := pkg-config libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev libsqlite3-dev \
	libavahi-compat-libdnssd-dev libqrencode-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libdbus-1-dev
# GStreamer elements: audio capture (convert/resample/appsink/decoders, WAV/FLAC/autoaudiosrc, ALSA, PulseAudio)
# and live streams (webrtcbin, DTLS/SRTP from -bad, ICE from libnice, Opus from -base, RTP and VP8 from -good,
# H.264 from x264enc in -ugly); Toukan's recorder: AAC-LC from FFmpeg's encoder (avenc_aac, gstreamer1.0-libav;
# -good's mp4mux/qtdemux/aacparse write and recover the fragmented .m4a) and espeak-ng's voice for test:speech.
APT_RUNTIME_PACKAGES := gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-alsa gstreamer1.0-pulseaudio \
	gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-nice gstreamer1.0-libav espeak-ng
# CribAlert's face detection: GStreamer's facedetect (OpenCV) and Debian's Haar cascades.
APT_RUNTIME_PACKAGES += gstreamer1.0-opencv opencv-data
# BeMyEars: real browsers (Debian's chromium + chromedriver), a TURN server (coturn) and PostgreSQL 15 (the tests
# start their own throwaway cluster with initdb; nothing system-wide is configured).
APT_TEST_PACKAGES := $(APT_BUILD_PACKAGES) $(APT_RUNTIME_PACKAGES) openssl coreutils python3 python3-venv iproute2 \
	nftables sqlite3 avahi-daemon dbus zbar-tools systemd chromium chromium-driver coturn postgresql
# BeMyEars: the Node.js `ws` anchor its benchmark compares with (held to the protocol by NodeAnchorTests).
APT_TEST_PACKAGES += nodejs node-ws
# Toukan's recorder: a private PulseAudio server killed and restarted under a recording.
APT_TEST_PACKAGES += pulseaudio pulseaudio-utils
# Argus: a network camera for its tests, GStreamer's RTSP server through PyGObject (Debian's Python).
APT_TEST_PACKAGES += python3-gi gir1.2-gst-rtsp-server-1.0
# CribCall's privacy capture: Wireshark's dumpcap captures every interface of a whole session, tshark dissects it.
APT_TEST_PACKAGES += tshark
APT_DEMO_PACKAGES := $(APT_BUILD_PACKAGES) $(APT_RUNTIME_PACKAGES) openssl python3
# toukan-server: AAC decoding/encoding (avenc_aac, avdec_aac in -libav), offline speech recognition (the GStreamer
# pocketsphinx element and its US English model), espeak-ng for spoken test fixtures, curl as an independent client.
APT_TOUKAN_SERVER_PACKAGES := gstreamer1.0-libav gstreamer1.0-pocketsphinx pocketsphinx-en-us espeak-ng curl
# gst-launch-1.0 (gstreamer1.0-tools): the server tests encode their M4A fixtures with it, and toukan-benchmark
# compares the recorder's CPU with the same encoding in it.
APT_TOUKAN_SERVER_PACKAGES += gstreamer1.0-tools
APT_DEMO_PACKAGES += gstreamer1.0-libav gstreamer1.0-pocketsphinx pocketsphinx-en-us
APT_TEST_PACKAGES += $(APT_TOUKAN_SERVER_PACKAGES)
# Independent peers: the RFC 8785 reference port, aioquic (exact pins: the interop hooks use its internals),
# python-zeroconf, jeepney (a D-Bus notification server for the desktop-notification tests), and aiortc (an
# independent WebRTC peer that must decode our Opus streams); for BeMyEars the websockets client library (protocol
# tests) and Selenium (drives Debian's chromedriver; nothing is downloaded).
PIP_TEST_PACKAGES := rfc8785==0.1.4 aioquic==1.7.2 cryptography==50.0.2 zeroconf==0.154.0 jeepney==0.9.0 \
	aiortc==1.14.0 aioice==0.13.0 av==16.1.0 pylibsrtp==1.0.0 pyee==13.0.1 google-crc32c==1.9.0 dnspython==2.9.2 \
	pyOpenSSL==26.4.0 websockets==15.0.1 selenium==4.51.0 trio==0.35.0 trio-websocket==0.12.2 outcome==1.3.0.post0 \
	sniffio==1.3.1 sortedcontainers==2.4.0 attrs==26.1.0 wsproto==1.3.2 h11==0.16.0 urllib3==2.8.0 PySocks==1.7.1 \
	certifi==2026.10.18 typing_extensions==4.16.0 websocket-client==1.9.2 idna==3.20
# toukan-server: tuspy, an independent tus 1.0 client, and what it needs (requests, aiohttp, tinydb).
PIP_TEST_PACKAGES += tuspy==1.1.0 tinydb==4.9.0 requests==2.34.2 charset-normalizer==3.5.3 aiohttp==3.14.5 \
	aiohappyeyeballs==2.7.1 aiosignal==1.4.0 frozenlist==1.8.0 multidict==7.2.1 propcache==0.5.4 yarl==1.25.1
# Argus: schemathesis holds the running hub to docs/api/mobile-api.yaml (all checks, stateful runs over its links).
PIP_TEST_PACKAGES += schemathesis==4.32.5 anyio==4.16.0 click==8.5.1 graphql-core==3.3.2 harfile==0.6.0 \
	hypothesis==6.170.17 hypothesis-graphql==0.13.5 iniconfig==2.3.1 jsonschema_rs==0.60.3 markdown-it-py==4.3.0 \
	MarkupSafe==3.0.4 mdurl==0.1.2 packaging==26.4 pluggy==1.7.0 Pygments==2.21.0 pyrate-limiter==4.5.1 \
	pytest==9.2.0 PyYAML==6.0.4 rich==15.0.0 Werkzeug==3.1.9
# Argus push: a local APNs stand-in (HTTP/2 over TLS with the pure-Python h2).
PIP_TEST_PACKAGES += h2==4.4.1 hyperframe==6.1.0 hpack==4.2.0
SECONDS ?= 600
DEMO_DIR := .demo

.PHONY: help demo test test-stress soak build deps-test deps-demo venv fuzz bench docs clean check-swift format lint

help:
	@echo "make demo            build and run the end-to-end demonstration"
	@echo "make test            install what tests need, build, run every test"
	@echo "make test-stress     the whole suite RUNS=3 times with both cores kept busy (finds timing flakes)"
	@echo "make soak [MINUTES=60]  a compressed night of CribCall (monitor, two listeners, Chromium; link cuts, a"
	@echo "                     new address, a power cut): fails on a lost alert or on growth; MINUTES=480 for a night"
	@echo "make fuzz SECONDS=N [TARGET=upload-parsers]  libFuzzer for N seconds over the control channel's frames,"
	@echo "                     JSON and messages (default), or Toukan's multipart, tus metadata and audio sniffing"
	@echo "make bench           release-build and run the benchmarks"
	@echo "make docs            the core modules' reference with DocC, as static HTML in .build/docs"
	@echo "make format          format every Swift file in place (.swift-format: 4 spaces, 120 columns)"
	@echo "make lint            check the formatting without changing anything (part of make test)"

check-swift:
	@command -v $(SWIFT) >/dev/null || { echo "Swift 6.3 is required (expected at /opt/swift/usr/bin)."; exit 1; }

# apt only when a package is missing; `apt-get update` only when something must be installed.
define apt_ensure
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps-test: check-swift
	$(call apt_ensure,$(APT_TEST_PACKAGES))
	@$(MAKE) --no-print-directory venv

deps-demo: check-swift
	$(call apt_ensure,$(APT_DEMO_PACKAGES))

# The venv holds the independent implementations tests compare against; rebuilt only when its inputs change.
# A real face for the face-detection tests, never committed: NASA's public-domain portrait of Eileen Collins that
# scikit-image ships as skimage/data/astronaut.png ("No known copyright restrictions, released into the public
# domain"), taken from the hash-pinned wheel (13.7 MB, not installed) and checked by its own hash.
FACE_PICTURE := $(VENV)/fixtures/astronaut.png
FACE_WHEEL := scikit-image==0.26.0 --hash=sha256:74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af
FACE_SHA256 := 88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
venv: $(VENV)/.installed $(FACE_PICTURE)
$(VENV)/.installed: Makefile
	@test -x $(PYTHON) || /usr/bin/python3 -m venv $(VENV)
	@$(PYTHON) -m pip install -q --disable-pip-version-check $(PIP_TEST_PACKAGES)
	@touch $@

$(FACE_PICTURE): | $(VENV)/.installed
	@mkdir -p $(VENV)/fixtures/wheel
	@echo '$(FACE_WHEEL)' > $(VENV)/fixtures/wheel/requirements.txt
	@$(PYTHON) -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
		--python-version 3.11 --platform manylinux_2_28_x86_64 --implementation cp --abi cp311 \
		--require-hashes -r $(VENV)/fixtures/wheel/requirements.txt -d $(VENV)/fixtures/wheel
	@$(PYTHON) -c 'import glob, hashlib, sys, zipfile; \
		data = zipfile.ZipFile(glob.glob(sys.argv[1] + "/scikit_image-0.26.0-*.whl")[0]).read("skimage/data/astronaut.png"); \
		assert hashlib.sha256(data).hexdigest() == sys.argv[2], "astronaut.png does not match its hash"; \
		open(sys.argv[3], "wb").write(data)' $(VENV)/fixtures/wheel $(FACE_SHA256) $@
	@rm -rf $(VENV)/fixtures/wheel

build: check-swift
	$(SWIFT) build

# swift-format ships with the toolchain; the configuration is .swift-format.
FORMATTED := Sources Tests Package.swift
format: check-swift
	$(SWIFT) format format --in-place --recursive --parallel $(FORMATTED)

lint: check-swift
	@findings=$$($(SWIFT) format lint --strict --recursive --parallel $(FORMATTED) 2>&1) \
		|| { echo "$$findings"; echo "make lint: the lines above are not formatted; run make format"; exit 1; }

# Ends with one line of wall times (build, tests), the figures to watch for a slow suite.
test: deps-test lint
	@started=$$(date +%s); \
	$(SWIFT) build --build-tests || exit 1; built=$$(date +%s); \
	HOMEAPPS_PYTHON=$(abspath $(PYTHON)) $(SWIFT) test --skip-build; status=$$?; \
	echo "make test: build $$((built - started)) s, tests $$(($$(date +%s) - built)) s"; exit $$status

# The suite under CPU pressure: HOGS busy loops (default one per core), RUNS runs; prints the flake count.
RUNS ?= 3
test-stress: deps-test
	HOMEAPPS_PYTHON=$(abspath $(PYTHON)) RUNS=$(RUNS) SWIFT=$(SWIFT) ./scripts/test-stress.sh

demo: deps-demo
	$(SWIFT) build -c release --product cribcall
	$(SWIFT) build -c release --product toukan
	$(SWIFT) build -c release --product toukan-server
	@CRIBCALL=$$($(SWIFT) build -c release --show-bin-path)/cribcall DEMO_DIR=$(DEMO_DIR) ./scripts/demo.sh
	@TOUKAN=$$($(SWIFT) build -c release --show-bin-path)/toukan \
		TOUKAN_SERVER_BIN=$$($(SWIFT) build -c release --show-bin-path)/toukan-server DEMO_DIR=$(DEMO_DIR) \
		./scripts/demo-toukan.sh
	$(SWIFT) build -c release --product argus-hub
	$(SWIFT) build -c release --product argus
	@ARGUS_HUB=$$($(SWIFT) build -c release --show-bin-path)/argus-hub \
		ARGUS=$$($(SWIFT) build -c release --show-bin-path)/argus \
		CRIBCALL=$$($(SWIFT) build -c release --show-bin-path)/cribcall DEMO_DIR=$(DEMO_DIR) ./scripts/demo-argus.sh

# Not part of `make test`: an hour by default (MINUTES=480 for a whole night); the report is in .build/soak/.
MINUTES ?= 60
soak: deps-test
	$(SWIFT) build --build-tests
	HOMEAPPS_PYTHON=$(abspath $(PYTHON)) HOMEAPPS_SOAK_MINUTES=$(MINUTES) $(SWIFT) test --skip-build \
		--filter CribCallEndToEndTests.SoakTests

bench: deps-test
	$(SWIFT) build -c release --product sound-detection-benchmark
	$(SWIFT) build -c release --product quic-benchmark
	$(SWIFT) build -c release --product alert-benchmark
	$(SWIFT) build -c release --product stream-benchmark
	$(SWIFT) build -c release --product bemyears-server
	$(SWIFT) build -c release --product bemyears-benchmark
	$(SWIFT) build -c release --product toukan
	$(SWIFT) build -c release --product toukan-server
	$(SWIFT) build -c release --product toukan-benchmark
	$(SWIFT) build -c release --product cribcall
	$(SWIFT) build -c release --product safety-benchmark
	$(SWIFT) build -c release --product argus-hub
	$(SWIFT) build -c release --product argus-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/sound-detection-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/alert-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/stream-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/quic-benchmark --python $(abspath $(PYTHON))
	$$($(SWIFT) build -c release --show-bin-path)/bemyears-benchmark --compare-node
	$$($(SWIFT) build -c release --show-bin-path)/toukan-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/safety-benchmark
	$$($(SWIFT) build -c release --show-bin-path)/argus-benchmark --python $(abspath $(PYTHON))

docs: check-swift
	SWIFT=$(SWIFT) ./scripts/docs.sh

fuzz: check-swift
	./Fuzz/run.sh $(or $(SECONDS),600) $(or $(TARGET),control-channel)

clean:
	rm -rf .build .build-* $(VENV) $(DEMO_DIR)
