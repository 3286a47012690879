# SPDX-License-Identifier: MIT
# profctl: the CLI and its renderers.  Included by daemon/profd/profd.mk
# and by tests/profctl.mk; the guard keeps one copy of the rules.
ifndef PROFCTL_MK
PROFCTL_MK := 1

PROFCTL := $(OUTPUT)/profctl
PROFCTL_SRCS := daemon/profctl/profctl_cli.c daemon/profctl/profctl_opts.c \
	daemon/profctl/profctl_report.c daemon/profctl/profctl_reset.c daemon/profctl/profctl_list.c \
	daemon/profctl/profctl_status.c daemon/profctl/profctl_src.c daemon/profctl/profctl_snap.c \
	daemon/profctl/profctl_zones.c daemon/profctl/profctl_top.c daemon/profctl/render_text.c \
	daemon/profctl/render_data.c daemon/profctl/render_html.c \
	daemon/profctl/profctl_clean.c daemon/profctl/profctl_file.c daemon/profctl/profctl_save.c daemon/profctl/profctl_input.c daemon/profctl/profctl_diff.c \
	daemon/profctl/profctl_pprof.c daemon/profctl/profctl_serve.c daemon/profctl/profctl_trace.c \
	daemon/profctl/trace_json.c daemon/profctl/profctl_log.c daemon/profctl/profctl_text.c \
	daemon/profctl/report_load.c daemon/profctl/serve_live.c daemon/profctl/profctl_annot.c
# profd's sampled stacks: report --inside
PROFCTL_SRCS += daemon/profctl/profctl_samples.c
# top's named locks
PROFCTL_SRCS += daemon/profctl/profctl_top_locks.c
# diff's named locks
PROFCTL_SRCS += daemon/profctl/profctl_diff_locks.c
PROFCTL_OBJS := $(patsubst daemon/profctl/%.c,$(OUTPUT)/daemon/profctl/%.o,$(PROFCTL_SRCS))
# everything but main(), for the tests
PROFCTL_LIB := $(OUTPUT)/daemon/profctl/libprofctl.a
PROFCTL_LIBS := -lelf -lpthread -lprotobuf-c -lz -lmicrohttpd -ljansson

# the profd client: profd.mk's object if it names one, else compile
# daemon/profctl/client.c here; without either, profctl only reads segments
ifneq ($(PROFD_CLIENT_OBJ),)
PROFCTL_CLIENT := $(PROFD_CLIENT_OBJ)
PROFCTL_DEFS :=
else ifneq ($(wildcard daemon/profctl/client.c),)
PROFCTL_CLIENT := $(OUTPUT)/daemon/profctl/profctl_client.o
PROFCTL_DEFS :=
$(PROFCTL_CLIENT): daemon/profctl/client.c | $(OUTPUT)/daemon/profctl
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) -c $< -o $@
else
PROFCTL_CLIENT :=
PROFCTL_DEFS := -DPROFCTL_NO_CLIENT
endif

# each html page (report, trace, serve's live page, diff) as a C array,
# NAME_html[] and NAME_html_len; the timeline (timeline.js) goes in place of
# a page's /*@TIMELINE_JS@*/ line, serve's own script (live.js) in place of
# its /*@LIVE_JS@*/ line
TIMELINE_JS := daemon/profctl/timeline.js
LIVE_JS := daemon/profctl/live.js
put_js = -e '/\/\*@$(1)@\*\//{' -e 'r $(2)' -e 'd' -e '}'

$(OUTPUT)/daemon/profctl/%_html.h: daemon/profctl/%.html $(TIMELINE_JS) $(LIVE_JS) \
		| $(OUTPUT)/daemon/profctl
	$(call msg,GEN,$@)
	$(Q){ echo '/* generated from $< by daemon/profctl/profctl.mk */'; \
	  echo 'static const unsigned char $*_html[] = {'; \
	  sed $(call put_js,TIMELINE_JS,$(TIMELINE_JS)) $(call put_js,LIVE_JS,$(LIVE_JS)) $< | xxd -i; \
	  echo '};'; \
	  echo '#define $*_html_len sizeof($*_html)'; } > $@

$(OUTPUT)/daemon/profctl/render_html.o: $(OUTPUT)/daemon/profctl/report_html.h
$(OUTPUT)/daemon/profctl/profctl_trace.o: $(OUTPUT)/daemon/profctl/trace_html.h
$(OUTPUT)/daemon/profctl/serve_live.o: $(OUTPUT)/daemon/profctl/live_html.h
$(OUTPUT)/daemon/profctl/profctl_diff.o: $(OUTPUT)/daemon/profctl/diff_html.h

# pprof's profile.proto, compiled by protoc-c (protobuf-c-compiler); the
# generated C is built without our warnings, which are not its author's
PROTOC_C ?= protoc-c
$(OUTPUT)/daemon/profctl/profile.pb-c.c $(OUTPUT)/daemon/profctl/profile.pb-c.h &: daemon/profctl/profile.proto \
		| $(OUTPUT)/daemon/profctl
	$(call msg,PROTOC,$@)
	$(Q)$(PROTOC_C) --c_out=$(OUTPUT)/daemon/profctl -Idaemon/profctl $<

$(OUTPUT)/daemon/profctl/profile.pb-c.o: $(OUTPUT)/daemon/profctl/profile.pb-c.c $(OUTPUT)/daemon/profctl/profile.pb-c.h
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(SANFLAGS) $(CFLAGS) -I$(OUTPUT)/daemon/profctl -c $< -o $@

$(OUTPUT)/daemon/profctl/profctl_pprof.o: $(OUTPUT)/daemon/profctl/profile.pb-c.h

$(PROFCTL_OBJS) $(OUTPUT)/daemon/profctl/profctl.o: $(OUTPUT)/daemon/profctl/%.o: daemon/profctl/%.c \
		| $(OUTPUT)/daemon/profctl
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DAEMON_INCLUDES) $(PROFCTL_DEFS) -c $< -o $@

$(PROFCTL_LIB): $(PROFCTL_OBJS) $(PROFCTL_CLIENT) $(OUTPUT)/daemon/profctl/profile.pb-c.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PROFCTL): $(OUTPUT)/daemon/profctl/profctl.o $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(PROFCTL_LIB) $(LIBPROF_READ) $(LIBPROF_A) -o $@ $(PROFCTL_LIBS)

# profctl serve's socket-activated pair: user units (it serves as its user)
SYSTEMD_USERUNITDIR ?= $(PREFIX)/lib/systemd/user

.PHONY: profctl install-profctl
profctl: $(PROFCTL)

install-profctl: $(PROFCTL)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 $(PROFCTL) $(DESTDIR)$(PREFIX)/bin/profctl
	install -m 0644 man/profctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/profctl.1
	install -m 0644 daemon/profctl/profctl.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/profctl
	install -d $(DESTDIR)$(SYSTEMD_USERUNITDIR)
	install -m 0644 systemd/profctl-serve.socket $(DESTDIR)$(SYSTEMD_USERUNITDIR)/
	sed 's|/usr/local/bin/profctl|$(PREFIX)/bin/profctl|' systemd/profctl-serve.service \
		> $(DESTDIR)$(SYSTEMD_USERUNITDIR)/profctl-serve.service

endif
