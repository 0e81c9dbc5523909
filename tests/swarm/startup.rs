//! What every start of swarm pays before it does anything (docs/ARCHITECTURE.md, "Start-up").
//! Its time is measured by `scripts/bench` (figure o); here, what makes it: how the binary is
//! linked.

/// On Linux with glibc the binary is linked at a fixed address, so the dynamic loader has only
/// the shared libraries' symbols to resolve, not a relocation for every pointer in its 20 MB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_leaves_the_loader_little_to_relocate() {
    const EXECUTABLE_AT_A_FIXED_ADDRESS: usize = 2;
    let elf = std::fs::read(crate::harness::bin()).unwrap();
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let half = |at: usize| usize::from(u16::from_le_bytes([elf[at], elf[at + 1]]));
    let word = |at: usize| {
        usize::try_from(u64::from_le_bytes(elf[at..at + 8].try_into().unwrap())).unwrap()
    };
    assert_eq!(
        half(16),
        EXECUTABLE_AT_A_FIXED_ADDRESS,
        "the binary is position-independent (ELF type {}): build.rs's -no-pie did not reach the linker",
        half(16)
    );
    // The relocation tables the loader reads: loaded sections (SHF_ALLOC) of type SHT_RELA.
    let (table, size, count) = (word(0x28), half(0x3a), half(0x3c));
    let relocations: usize = (0..count)
        .map(|index| table + index * size)
        .filter(|&header| {
            u32::from_le_bytes(elf[header + 4..header + 8].try_into().unwrap()) == 4
                && word(header + 8) & 2 != 0
        })
        .map(|header| word(header + 0x20) / word(header + 0x38))
        .sum();
    assert!(
        relocations < 2_000,
        "{relocations} relocations for the loader to apply at every start"
    );
}
