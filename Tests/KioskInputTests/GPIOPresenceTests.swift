// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskCore
import CKioskGpio
@testable import KioskInput

// The option's value, and the reader where there is no such chip (the host has no GPIO chip;
// the kernel suite's presence-gpio case runs it on gpio-sim, docs/power.md).

@Suite struct PresenceSensorSpecTests {
    @Test func parsesTheChipTheLineAndTheOptions() throws {
        let plain = try PresenceSensorSpec.parse("gpio:gpiochip0:17")
        #expect(
            plain.chip == "gpiochip0" && plain.line == "17" && !plain.activeLow && plain.debounce == .milliseconds(50)
                && plain.bias == nil)
        let all = try PresenceSensorSpec.parse("gpio:/dev/gpiochip2:PIR,active-low,debounce=0,pull-up")
        #expect(
            all.chip == "/dev/gpiochip2" && all.line == "PIR" && all.activeLow && all.debounce == .zero
                && all.bias == .pullUp)
        #expect(all.description == "gpio:/dev/gpiochip2:PIR,active-low,debounce=0,pull-up")
        #expect(try PresenceSensorSpec.parse(all.description) == all)
    }

    @Test func refusesBadValuesSayingWhy() {
        func reason(_ v: String) -> String {
            do { _ = try PresenceSensorSpec.parse(v); return "accepted" } catch { return "\(error)" }
        }
        #expect(reason("gpiochip0:17").contains("expected gpio:CHIP:LINE"))
        #expect(reason("gpio:gpiochip0").contains("expected gpio:CHIP:LINE"))
        #expect(reason("gpio::17").contains("no CHIP"))
        #expect(reason("gpio:gpiochip0:").contains("no LINE"))
        #expect(reason("gpio:gpiochip0:17,debounce=-1").contains("'debounce=-1': expected debounce=MS"))
        #expect(reason("gpio:gpiochip0:17,debounce=20000").contains("0 ... 10000"))
        #expect(reason("gpio:gpiochip0:17,active-high").contains("unknown option 'active-high'"))
        #expect(reason("gpio:x:1,y").hasPrefix("--presence 'gpio:x:1,y': "))
        #expect(reason("gpio:gpiochip0:17,pull-up,pull-down").contains("'pull-down' after 'pull-up': one bias at most"))
        #expect(reason("gpio:gpiochip0:17,debounce=5,debounce=80").contains("'debounce' given twice"))
        #expect(reason("gpio:gpiochip0:17,active-low,active-low").contains("'active-low' given twice"))
    }
}

@Suite struct GPIOPresenceInputTests {
    @Test func aChipThatIsNotThereIsReportedOnceAndTriedAgain() throws {
        let spec = try PresenceSensorSpec.parse("gpio:kc-no-such-chip-\(getpid()):3")
        let input = try GPIOPresenceInput(spec: spec, showStart: .zero)
        try input.start()
        defer { input.stop() }
        let first = input.events.wait(timeout: .seconds(5))
        guard case .unavailable(let reason)? = first.first else {
            Issue.record("expected unavailable, got \(first)")
            return
        }
        #expect(reason.contains("gpiod_chip_open_lookup") && reason.contains("kc-no-such-chip-"), "\(reason)")
        // Nothing more within a second (the next try is 5 s on, and the same reason is not repeated).
        #expect(input.events.wait(timeout: .seconds(1)).isEmpty)
    }

    @Test func theLibgpiodOfThisSystemIsOpenedWithTheAPIOfItsSoname() {
        // libgpiod.so.3 is libgpiod 2.x (Debian 13), libgpiod.so.2 is 1.6 (Debian 12).
        func has(_ soname: String) -> Bool {
            ["/usr/lib/x86_64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/usr/lib/"].contains {
                access($0 + soname, F_OK) == 0
            }
        }
        let expected: Int32 = has("libgpiod.so.3") ? 2 : has("libgpiod.so.2") ? 1 : 0
        #expect(kc_gpio_api() == expected)
        #expect((kc_gpio_load_error() == nil) == (expected != 0))
        // A chip of no such name: ENOENT, from either API's lookup.
        errno = 0
        #expect(kc_gpio_chip_open("kc-no-such-chip-\(getpid())") == nil)
        #expect(errno == (expected == 0 ? ELIBACC : ENOENT))
    }
}
