import CUdev
import Foundation

/// A tty device as udev (or, without a udev daemon, sysfs) describes it.
package struct TTYDevice: Sendable, Hashable, Codable {
    /// Kernel name (`ttyUSB0`).
    package var sysname: String
    /// Device node (`/dev/ttyUSB0`), when it has one.
    package var devnode: String?
    /// sysfs path (`/sys/devices/…/ttyUSB0`).
    package var syspath: String
    /// Every udev property (kernel ones such as `DEVNAME`, and `ID_*` when udevd imported them).
    package var properties: [String: String]
    /// udev tags (`systemd`, `healthgate-pedometer`); empty without a udev daemon.
    package var tags: [String]
    /// Symlinks to the node (`/dev/serial/by-id/…`, `/dev/healthgate/pedometer-…`).
    package var devlinks: [String]
    /// USB vendor id, four lowercase hex digits (`ID_VENDOR_ID`, else sysfs `idVendor`).
    package var vendorID: String?
    /// USB product id (`ID_MODEL_ID`, else sysfs `idProduct`).
    package var modelID: String?
    /// USB serial number (`ID_SERIAL_SHORT`, else sysfs `serial`).
    package var serialShort: String?
    /// Manufacturer string (`ID_VENDOR`, else sysfs `manufacturer`).
    package var manufacturer: String?
    /// Product string (`ID_MODEL`, else sysfs `product`).
    package var product: String?
    /// The kernel driver of the port (`ftdi_sio`, `cdc_acm`, `serial8250`), if any.
    package var driver: String?
    /// True when the USB ids came from sysfs because no udev daemon had imported `ID_*`.
    package var idsFromSysfs: Bool
    /// True for a device backed by hardware (it has a parent device); false for virtual
    /// consoles, `ptmx` and `console`.
    package var hasHardware: Bool
    /// The physical USB port the adapter is plugged into, as udev names it in
    /// `/dev/serial/by-path/` (``USBPort/path``); nil without a USB parent.
    package var usbPortPath: String?

    /// The `/dev/serial/by-id/…` link, when udevd made one.
    package var byIDPath: String? { devlinks.first { $0.hasPrefix("/dev/serial/by-id/") } }

    /// The device's pedometer id (``PedometerIdentity``'s rule): its USB serial number, else the
    /// physical USB port, else its device node (else its kernel name).
    package var stableID: String {
        PedometerIdentity.choose(serial: serialShort, usbPort: usbPortPath, node: devnode ?? sysname).id
    }

    /// Creates a description by hand (tests, captures).
    package init(sysname: String, devnode: String? = nil, syspath: String = "", properties: [String: String] = [:],
                tags: [String] = [], devlinks: [String] = [], vendorID: String? = nil, modelID: String? = nil,
                serialShort: String? = nil, manufacturer: String? = nil, product: String? = nil,
                driver: String? = nil, idsFromSysfs: Bool = false, hasHardware: Bool = true, usbPortPath: String? = nil) {
        self.sysname = sysname; self.devnode = devnode; self.syspath = syspath; self.properties = properties
        self.tags = tags; self.devlinks = devlinks; self.vendorID = vendorID; self.modelID = modelID
        self.serialShort = serialShort; self.manufacturer = manufacturer; self.product = product
        self.driver = driver; self.idsFromSysfs = idsFromSysfs; self.hasHardware = hasHardware
        self.usbPortPath = usbPortPath
    }

    /// Reads a device from a libudev handle, falling back to sysfs attributes of the USB parent
    /// for the ids when udevd has not imported `ID_*` (no daemon, or not processed yet).
    init(_ dev: OpaquePointer) {
        func str(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        func list(_ first: OpaquePointer?, values: Bool) -> [(String, String?)] {
            var out: [(String, String?)] = []
            var e = first
            while let entry = e {
                out.append((str(udev_list_entry_get_name(entry)) ?? "", values ? str(udev_list_entry_get_value(entry)) : nil))
                e = udev_list_entry_get_next(entry)
            }
            return out
        }
        sysname = str(udev_device_get_sysname(dev)) ?? ""
        devnode = str(udev_device_get_devnode(dev))
        syspath = str(udev_device_get_syspath(dev)) ?? ""
        var props: [String: String] = [:]
        for (k, v) in list(udev_device_get_properties_list_entry(dev), values: true) { props[k] = v ?? "" }
        properties = props
        tags = list(udev_device_get_tags_list_entry(dev), values: false).map(\.0).sorted()
        devlinks = list(udev_device_get_devlinks_list_entry(dev), values: false).map(\.0).sorted()
        let parent = udev_device_get_parent(dev)
        hasHardware = parent != nil
        driver = props["ID_USB_DRIVER"] ?? parent.flatMap { str(udev_device_get_driver($0)) }
        vendorID = props["ID_VENDOR_ID"]
        modelID = props["ID_MODEL_ID"]
        serialShort = props["ID_SERIAL_SHORT"]
        manufacturer = props["ID_VENDOR"]
        product = props["ID_MODEL"]
        idsFromSysfs = false
        usbPortPath = syspath.isEmpty ? nil : USBPort(ttyClassDirectory: syspath, sysfs: Sysfs(root: "/sys"))?.path
        if vendorID == nil, let usb = udev_device_get_parent_with_subsystem_devtype(dev, "usb", "usb_device") {
            func attr(_ name: String) -> String? {
                str(udev_device_get_sysattr_value(usb, name))?.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            vendorID = attr("idVendor")?.lowercased()
            modelID = attr("idProduct")?.lowercased()
            serialShort = attr("serial")
            manufacturer = attr("manufacturer")
            product = attr("product")
            idsFromSysfs = vendorID != nil
        }
    }
}

extension TTYDevice {
    /// `serial list --json`'s object: the kernel's and udev's names and properties, the ids
    /// that are known (`vendorID`, `modelID`, `serial`, …, each left out when unknown), the
    /// pedometer `id` the one rule gives it, and `pedometer`/`matchedBy`: the rule that matches
    /// it (nil: none does).
    package func jsonObject(matchedBy rule: String?) -> [String: any Sendable] {
        var o: [String: any Sendable] = ["name": sysname, "syspath": syspath, "properties": properties,
                                         "tags": tags, "devlinks": devlinks, "idsFromSysfs": idsFromSysfs,
                                         "pedometer": rule != nil, "id": stableID]
        if let v = devnode { o["devnode"] = v }
        if let v = vendorID { o["vendorID"] = v }
        if let v = modelID { o["modelID"] = v }
        if let v = serialShort { o["serial"] = v }
        if let v = manufacturer { o["manufacturer"] = v }
        if let v = product { o["product"] = v }
        if let v = driver { o["driver"] = v }
        if let v = byIDPath { o["byID"] = v }
        if let rule { o["matchedBy"] = rule }
        return o
    }
}
