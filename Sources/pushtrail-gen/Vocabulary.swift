/// Words the generated events are made of. All ASCII or plain UTF-8 without `"` or `\`,
/// so they can be copied into JSON strings without escaping.
enum Vocabulary {
    static let firstNames: [String] = [
        "Alice", "Ben", "Carlos", "Dana", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kara", "Liam",
        "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tomas", "Uma", "Victor", "Wen", "Ximena",
        "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Diego", "Emeka", "Fatima", "Gus", "Hannah", "Ivan", "Jade",
        "Kofi", "Lena", "Marco", "Nadia", "Oscar", "Paula", "Rafael", "Sofia", "Theo", "Ursula", "Valentina",
        "Will", "Yara", "Zane", "Aiko", "Björn", "Chiara", "Dmitri", "Esther", "Felix", "Gemma", "Hugo", "Isla",
        "Jorge", "Kenji", "Lucía", "Mateo", "Nora",
    ]

    /// Task names with the name an `edit` gives them.
    static let tasks: [(String, String)] = [
        ("Take out recycling bins", "Take out recycling and compost bins"),
        ("Test smoke alarms", "Test smoke & CO detectors"),
        ("Clean gutters", "Clean gutters and downspouts"),
        ("Service water heater", "Flush and service water heater"),
        ("Winterize outdoor faucets", "Winterize outdoor faucets and hoses"),
        ("Blow out sprinkler lines", "Blow out irrigation and sprinkler lines"),
        ("Reseal shower grout", "Reseal shower grout and caulk"),
        ("Replace HVAC filter", "Replace HVAC filter (MERV 11)"),
        ("Change furnace filter", "Change furnace filter and check pilot"),
        ("Clean dryer vent", "Clean dryer vent and lint trap duct"),
        ("Descale coffee maker", "Descale coffee maker and kettle"),
        ("Clean refrigerator coils", "Vacuum refrigerator condenser coils"),
        ("Check garage door opener", "Lubricate and test garage door opener"),
        ("Mow the lawn", "Mow and edge the lawn"),
        ("Rake leaves", "Rake leaves and bag yard waste"),
        ("Power wash deck", "Power wash and reseal deck"),
        ("Inspect roof shingles", "Inspect roof shingles after storm"),
        ("Clean chimney", "Sweep chimney and inspect flue"),
        ("Replace toothbrush heads", "Replace electric toothbrush heads"),
        ("Clean oven", "Deep clean oven and racks"),
        ("Check fire extinguisher", "Check fire extinguisher pressure gauge"),
        ("Flush water softener", "Add salt and flush water softener"),
        ("Clean range hood filter", "Degrease range hood filter"),
        ("Test sump pump", "Test sump pump and backup battery"),
        ("Trim hedges", "Trim hedges along the driveway"),
        ("Fertilize lawn", "Apply fall lawn fertilizer"),
        ("Clean windows", "Clean windows inside and out"),
        ("Wash window screens", "Wash and repair window screens"),
        ("Replace water filter", "Replace fridge water filter"),
        ("Check tire pressure", "Check tire pressure on both cars"),
        ("Rotate mattress", "Rotate and vacuum mattress"),
        ("Clean dishwasher filter", "Clean dishwasher filter and spray arms"),
        ("Bleed radiators", "Bleed radiators before winter"),
        ("Seal driveway cracks", "Seal driveway cracks and joints"),
        ("Service lawn mower", "Sharpen blade and service lawn mower"),
        ("Drain outdoor hoses", "Drain and store outdoor hoses"),
        ("Clean bathroom exhaust fan", "Clean bathroom exhaust fan cover"),
        ("Inspect attic insulation", "Inspect attic insulation and vents"),
        ("Test GFCI outlets", "Test all GFCI outlets"),
        ("Caulk windows", "Caulk exterior window frames"),
        ("Pay HOA dues", "Pay quarterly HOA dues"),
        ("Renew home insurance", "Review and renew home insurance"),
        ("Clean pool filter", "Backwash pool filter"),
        ("Treat for termites", "Schedule termite inspection"),
        ("Check smoke detector batteries", "Replace smoke detector batteries"),
        ("Clean ceiling fans", "Dust ceiling fans and light fixtures"),
        ("Organize garage", "Organize garage shelves"),
        ("Repaint front door", "Sand and repaint front door"),
        ("Fix leaky faucet", "Replace kitchen faucet cartridge"),
        ("Unclog bathroom drain", "Snake bathroom sink drain"),
        ("Water indoor plants", "Water and fertilize indoor plants"),
        ("Prune fruit trees", "Prune apple and pear trees"),
        ("Clean grill", "Deep clean grill grates and burners"),
        ("Check basement for leaks", "Check basement walls for moisture"),
        ("Replace weather stripping", "Replace door weather stripping"),
        ("Service AC unit", "Schedule AC unit tune-up"),
        ("Clean out fridge", "Clean out fridge and freezer"),
        ("Shovel walkway", "Shovel and salt the walkway"),
        ("Wash car", "Wash and wax car"),
        ("Inspect septic system", "Schedule septic tank pumping"),
        ("Vacuum under furniture", "Vacuum under couches and beds"),
        ("Restock first aid kit", "Restock first aid kit and check dates"),
    ]

    static let places: [String] = [
        "Maple Street", "Elm Court", "Lakeview", "Oak Ridge", "Cedar Lane", "Birch Hollow", "Pine Crest",
        "Harbor View", "Willow Creek", "Sunset Boulevard", "Riverside", "Hillcrest", "Juniper Way",
        "Aspen Grove", "Magnolia Drive", "Chestnut Hill", "Bayside", "Meadowbrook", "Foxglove Road",
        "Seaview Terrace", "Granite Falls", "Orchard Park", "Cypress Point", "Brookside", "Hawthorne Avenue",
        "Lindenstraße", "Rue des Lilas", "Via Roma", "Calle del Sol", "Kirkwood", "Ashford Mews", "Stonegate",
        "Larkspur", "Whispering Pines", "Copper Canyon", "Bramble Lane", "Quarry Road", "Mill Pond",
        "Heron Bay", "Summit Ridge",
    ]

    static let homeKinds: [String] = [
        "House", "Cabin", "Apartment", "Condo", "Cottage", "Townhouse", "Duplex", "Loft", "Farmhouse", "Bungalow",
    ]

    /// Sentences repeated to build an oversized custom key for `payload_too_large` anomalies.
    static let noteSentences: [String] = [
        "Check the shutoff valve under the sink before starting. ",
        "Photos from the last visit are attached in the app. ",
        "The contractor said the part is on back order until next month. ",
        "Use the ladder in the garage, not the step stool. ",
        "Previous notes: replaced the gasket, tightened the fittings, tested for leaks. ",
        "Remember to reset the breaker afterwards and note the meter reading. ",
    ]
}

/// Interned UTF-8 text: one allocation holding every word, addressed by offset and length,
/// so writing a name is one `memcpy`.
struct TextPool {
    struct Ref {
        var start: Int32
        var length: Int32
    }

    private(set) var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0

    init() {
        capacity = 1 << 16
        base = .allocate(capacity: capacity)
    }

    mutating func add(_ text: String) -> Ref {
        let bytes = Array(text.utf8)
        if used + bytes.count > capacity {
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2 + bytes.count)
            bigger.update(from: base, count: used)
            base.deallocate()
            base = bigger
            capacity = capacity * 2 + bytes.count
        }
        (base + used).update(from: bytes, count: bytes.count)
        defer { used += bytes.count }
        return Ref(start: Int32(used), length: Int32(bytes.count))
    }
}

extension ByteSink {
    @inline(__always)
    mutating func text(_ ref: TextPool.Ref, in pool: UnsafeMutablePointer<UInt8>) {
        bytes(pool + Int(ref.start), Int(ref.length))
    }
}
