# SPDX-License-Identifier: MIT
# profctl: the CLI and its renderers (issue 4).  Included by daemon/daemon.mk
# and by tests/profctl.mk; the guard keeps one copy of the rules.
ifndef PROFCTL_MK
PROFCTL_MK := 1

PROFCTL := $(OUTPUT)/profctl
PROFCTL_SRCS := daemon/profctl_cli.c daemon/profctl_src.c daemon/profctl_snap.c \
	daemon/profctl_zones.c daemon/profctl_top.c daemon/render_text.c \
	daemon/render_data.c daemon/render_html.c daemon/profctl_par.c \
	daemon/profctl_clean.c daemon/profctl_save.c daemon/profctl_diff.c \
	daemon/profctl_pprof.c daemon/profctl_serve.c
PROFCTL_OBJS := $(patsubst daemon/%.c,$(OUTPUT)/daemon/%.o,$(PROFCTL_SRCS))
PROFCTL_HDRS := daemon/profctl.h daemon/client.h usdt/snapshot.h usdt/slab.h usdt/prof.h usdt/proffile.h
# everything but main(), for the tests
PROFCTL_LIB := $(OUTPUT)/daemon/libprofctl.a
PROFCTL_LIBS := -lelf -lpthread -lprotobuf-c -lz -lmicrohttpd

# the profd client: daemon.mk's object if it names one, else compile
# daemon/client.c here; without either, profctl only reads segments
ifneq ($(PROFD_CLIENT_OBJ),)
PROFCTL_CLIENT := $(PROFD_CLIENT_OBJ)
PROFCTL_DEFS :=
else ifneq ($(wildcard daemon/client.c),)
PROFCTL_CLIENT := $(OUTPUT)/daemon/profctl_client.o
PROFCTL_DEFS :=
$(PROFCTL_CLIENT): daemon/client.c daemon/client.h $(wildcard daemon/proto.h) usdt/snapshot.h \
		| $(OUTPUT)/daemon
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Idaemon -c $< -o $@
else
PROFCTL_CLIENT :=
PROFCTL_DEFS := -DPROFCTL_NO_CLIENT
endif

# the html template as a C array
$(OUTPUT)/daemon/report_html.h: daemon/report.html | $(OUTPUT)/daemon
	$(call msg,GEN,$@)
	$(Q){ echo '/* generated from daemon/report.html by daemon/profctl.mk */'; \
	  echo 'static const unsigned char report_html[] = {'; \
	  xxd -i < $<; \
	  echo '};'; \
	  echo '#define report_html_len sizeof(report_html)'; } > $@

$(OUTPUT)/daemon/render_html.o: $(OUTPUT)/daemon/report_html.h

# diff's page, the same way
$(OUTPUT)/daemon/diff_html.h: daemon/diff.html | $(OUTPUT)/daemon
	$(call msg,GEN,$@)
	$(Q){ echo '/* generated from daemon/diff.html by daemon/profctl.mk */'; \
	  echo 'static const unsigned char diff_html[] = {'; \
	  xxd -i < $<; \
	  echo '};'; \
	  echo '#define diff_html_len sizeof(diff_html)'; } > $@

$(OUTPUT)/daemon/profctl_diff.o: $(OUTPUT)/daemon/diff_html.h

# pprof's profile.proto, compiled by protoc-c (protobuf-c-compiler); the
# generated C is built without our warnings, which are not its author's
PROTOC_C ?= protoc-c
$(OUTPUT)/daemon/profile.pb-c.c $(OUTPUT)/daemon/profile.pb-c.h &: daemon/profile.proto \
		| $(OUTPUT)/daemon
	$(call msg,PROTOC,$@)
	$(Q)$(PROTOC_C) --c_out=$(OUTPUT)/daemon -Idaemon $<

$(OUTPUT)/daemon/profile.pb-c.o: $(OUTPUT)/daemon/profile.pb-c.c $(OUTPUT)/daemon/profile.pb-c.h
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(SANFLAGS) $(CFLAGS) -I$(OUTPUT)/daemon -c $< -o $@

$(OUTPUT)/daemon/profctl_pprof.o: $(OUTPUT)/daemon/profile.pb-c.h

$(PROFCTL_OBJS) $(OUTPUT)/daemon/profctl.o: $(OUTPUT)/daemon/%.o: daemon/%.c $(PROFCTL_HDRS) \
		| $(OUTPUT)/daemon
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Idaemon $(PROFCTL_DEFS) -c $< -o $@

$(PROFCTL_LIB): $(PROFCTL_OBJS) $(PROFCTL_CLIENT) $(OUTPUT)/daemon/profile.pb-c.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PROFCTL): $(OUTPUT)/daemon/profctl.o $(PROFCTL_LIB) $(LIBPROF_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(PROFCTL_LIB) $(LIBPROF_A) -o $@ $(PROFCTL_LIBS)

# profctl serve's socket-activated pair: user units (it serves as its user)
SYSTEMD_USERUNITDIR ?= $(PREFIX)/lib/systemd/user

.PHONY: profctl install-profctl
profctl: $(PROFCTL)

install-profctl: $(PROFCTL)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 $(PROFCTL) $(DESTDIR)$(PREFIX)/bin/profctl
	install -m 0644 man/profctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/profctl.1
	install -m 0644 daemon/profctl.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/profctl
	install -d $(DESTDIR)$(SYSTEMD_USERUNITDIR)
	install -m 0644 systemd/profctl-serve.socket $(DESTDIR)$(SYSTEMD_USERUNITDIR)/
	sed 's|/usr/local/bin/profctl|$(PREFIX)/bin/profctl|' systemd/profctl-serve.service \
		> $(DESTDIR)$(SYSTEMD_USERUNITDIR)/profctl-serve.service

endif
