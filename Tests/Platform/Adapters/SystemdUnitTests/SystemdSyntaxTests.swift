import Foundation
import SystemdUnit
import Testing

/// Quoting of ExecStart= words and rendering of the CribCall units.
@Suite("SystemdSyntax and CribCallServiceUnit")
struct SystemdSyntaxTests {
    @Test(
        "each tricky argument is quoted as systemd.syntax(7) and systemd.service(5) require",
        arguments: [
            ("monitor", "monitor"),
            ("--data-dir=/a/b", "--data-dir=/a/b"),
            ("", "\"\""),
            ("Baby room", "\"Baby room\""),
            ("say \"hi\"", "\"say \\\"hi\\\"\""),
            ("it's", "\"it's\""),
            ("100%", "\"100%%\""),
            ("%n", "\"%%n\""),
            ("$HOME", "\"$$HOME\""),
            ("${HOME}", "\"$${HOME}\""),
            ("C:\\dir\\", "\"C:\\\\dir\\\\\""),
            (";", "\\;"),
            ("a;b", "\"a;b\""),
            ("line\nbreak", "\"line\\nbreak\""),
            ("tab\there", "\"tab\\there\""),
            ("esc\u{1B}[0m", "\"esc\\x1b[0m\""),
            ("Kinderzimmer-Ü", "Kinderzimmer-Ü"),
            ("bébé 👶", "\"bébé 👶\""),
        ])
    func quoting(argument: String, expected: String) {
        #expect(SystemdSyntax.quoted(argument) == expected)
    }

    @Test("the program path must be absolute, normalised, and free of '$' and control characters")
    func programPath() throws {
        #expect(
            try SystemdSyntax.commandLine(executable: "/opt/crib call/100%/cribcall", arguments: ["monitor"])
                == "\"/opt/crib call/100%%/cribcall\" monitor")
        for bad in [
            "cribcall", "./cribcall", "/opt//cribcall", "/opt/../cribcall", "/opt/$x/cribcall", "/opt/a\nb", "/opt/",
        ] {
            #expect(throws: SystemdUnitError.self, "\(bad)") {
                try SystemdSyntax.commandLine(executable: bad, arguments: [])
            }
        }
    }

    @Test("setting values escape specifiers and cannot break the line")
    func values() {
        #expect(SystemdSyntax.value("CribCall monitor \"100% Nursery\"") == "CribCall monitor \"100%% Nursery\"")
        #expect(SystemdSyntax.value(" a\nb\\") == "a b")
    }

    @Test("the monitor unit: absolute data dir, passed-through options, restart policy, user-manager hardening")
    func monitorUnit() throws {
        let unit = try CribCallServiceUnit.unit(
            .monitor,
            .init(
                executable: "/usr/local/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/home/ana/crib data/"),
                name: "Nursery 2", audioSource: "test:cry", port: 48081))
        #expect(unit.name == "cribcall-monitor.service")
        #expect(
            try unit.rendered() == """
                # Written by `cribcall install-service monitor`. Run it again (with --force) to change the settings.
                [Unit]
                Description=CribCall monitor "Nursery 2"

                [Service]
                Type=exec
                ExecStart=/usr/local/bin/cribcall monitor --data-dir "/home/ana/crib data" --name "Nursery 2" \
                --audio-source test:cry --port 48081
                Restart=on-failure
                RestartSec=5
                SyslogIdentifier=cribcall-monitor
                # Hardening that works in the user manager without privileges.
                NoNewPrivileges=yes
                LockPersonality=yes
                RestrictSUIDSGID=yes
                UMask=0077

                [Install]
                WantedBy=default.target

                """)
    }

    @Test("the listener unit runs `cribcall listen` and refuses monitor-only settings")
    func listenerUnit() throws {
        let unit = try CribCallServiceUnit.unit(
            .listener,
            .init(
                executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/var/lib/x"), name: "Kitchen"))
        #expect(unit.name == "cribcall-listener.service")
        #expect(unit.arguments == ["listen", "--data-dir", "/var/lib/x", "--name", "Kitchen"])
        #expect(throws: SystemdUnitError.self) {
            try CribCallServiceUnit.unit(
                .listener,
                .init(
                    executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/x"), port: 1))
        }
    }

    @Test("the running program's path is absolute and executable")
    func currentExecutable() {
        let path = CribCallServiceUnit.currentExecutable()
        #expect(path.hasPrefix("/"))
        #expect(FileManager.default.isExecutableFile(atPath: path))
    }
}
