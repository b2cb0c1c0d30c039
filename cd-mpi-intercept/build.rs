//! Reads the MPI ABI of the family `$MPICC` belongs to (MPICH by default) and compiles the C
//! shim that hands the predefined handles to Rust.
//!
//! MPICH and Open MPI differ in every detail the wrappers touch: handles are `int`s in one and
//! pointers to globals in the other, `MPI_Status` has other fields and sizes, the sentinels
//! (`MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, ...) have other values. Nothing of that is written in
//! this crate: a probe program compiled with `$MPICC` prints it as Rust (`OUT_DIR/abi.rs`),
//! and the shim, also compiled with `$MPICC`, returns the predefined handles. The shim must not
//! make `libcd.so` depend on `libmpi` at load time (a GPU code without MPI links it too), so
//! every global the handle macros refer to (Open MPI's `ompi_mpi_comm_world`, ...) is declared
//! weak: it resolves when an MPI library is loaded and is never touched otherwise.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The MPI handle types the wrappers use, with the Rust name of each.
const HANDLE_TYPES: &[(&str, &str)] = &[
    ("MPI_Comm", "Comm"),
    ("MPI_Datatype", "Datatype"),
    ("MPI_Request", "Request"),
    ("MPI_Op", "Op"),
    ("MPI_Group", "Group"),
    ("MPI_Info", "Info"),
    ("MPI_Message", "Message"),
    ("MPI_Errhandler", "Errhandler"),
    ("MPI_Win", "Win"),
    ("MPI_File", "File"),
];

/// Predefined handles the runtime needs: (C macro, C type, shim function suffix).
const PREDEFINED: &[(&str, &str, &str)] = &[
    ("MPI_COMM_WORLD", "MPI_Comm", "comm_world"),
    ("MPI_COMM_SELF", "MPI_Comm", "comm_self"),
    ("MPI_COMM_NULL", "MPI_Comm", "comm_null"),
    ("MPI_REQUEST_NULL", "MPI_Request", "request_null"),
    ("MPI_MESSAGE_NULL", "MPI_Message", "message_null"),
    ("MPI_MESSAGE_NO_PROC", "MPI_Message", "message_no_proc"),
    ("MPI_DATATYPE_NULL", "MPI_Datatype", "datatype_null"),
    ("MPI_BYTE", "MPI_Datatype", "byte"),
    ("MPI_PACKED", "MPI_Datatype", "packed"),
    ("MPI_INT", "MPI_Datatype", "int"),
    ("MPI_UINT64_T", "MPI_Datatype", "uint64"),
    ("MPI_GROUP_NULL", "MPI_Group", "group_null"),
    ("MPI_INFO_NULL", "MPI_Info", "info_null"),
    ("MPI_OP_NULL", "MPI_Op", "op_null"),
    ("MPI_MIN", "MPI_Op", "op_min"),
    ("MPI_MAX", "MPI_Op", "op_max"),
    ("MPI_ERRORS_ARE_FATAL", "MPI_Errhandler", "errors_are_fatal"),
    ("MPI_ERRORS_RETURN", "MPI_Errhandler", "errors_return"),
];

/// Integer constants: (C macro, Rust name).
const INT_CONSTANTS: &[(&str, &str)] = &[
    ("MPI_SUCCESS", "SUCCESS"),
    ("MPI_ANY_SOURCE", "ANY_SOURCE"),
    ("MPI_ANY_TAG", "ANY_TAG"),
    ("MPI_PROC_NULL", "PROC_NULL"),
    ("MPI_ROOT", "ROOT"),
    ("MPI_UNDEFINED", "UNDEFINED"),
    ("MPI_ERR_OTHER", "ERR_OTHER"),
    ("MPI_ERR_INTERN", "ERR_INTERN"),
    ("MPI_ERR_ARG", "ERR_ARG"),
    ("MPI_ERR_REQUEST", "ERR_REQUEST"),
    ("MPI_ERR_COUNT", "ERR_COUNT"),
    ("MPI_ERR_TRUNCATE", "ERR_TRUNCATE"),
    ("MPI_ERR_IN_STATUS", "ERR_IN_STATUS"),
    ("MPI_ERR_PENDING", "ERR_PENDING"),
    ("MPI_ERR_TOPOLOGY", "ERR_TOPOLOGY"),
    ("MPI_THREAD_SINGLE", "THREAD_SINGLE"),
    ("MPI_THREAD_FUNNELED", "THREAD_FUNNELED"),
    ("MPI_THREAD_SERIALIZED", "THREAD_SERIALIZED"),
    ("MPI_THREAD_MULTIPLE", "THREAD_MULTIPLE"),
    ("MPI_MAX_ERROR_STRING", "MAX_ERROR_STRING"),
    ("MPI_COMBINER_NAMED", "COMBINER_NAMED"),
    ("MPI_CART", "CART"),
    ("MPI_GRAPH", "GRAPH"),
    ("MPI_DIST_GRAPH", "DIST_GRAPH"),
    ("MPI_VERSION", "VERSION"),
];

/// Pointer sentinels: (C macro, Rust name); compared as addresses.
const SENTINELS: &[(&str, &str)] = &[
    ("MPI_IN_PLACE", "IN_PLACE"),
    ("MPI_BOTTOM", "BOTTOM"),
    ("MPI_STATUS_IGNORE", "STATUS_IGNORE"),
    ("MPI_STATUSES_IGNORE", "STATUSES_IGNORE"),
    ("MPI_UNWEIGHTED", "UNWEIGHTED"),
    ("MPI_ERRCODES_IGNORE", "ERRCODES_IGNORE"),
];

fn main() {
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/shim/shim.c");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mpicc = env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned());

    let mut abi = probe(&mpicc, &out);
    // The MPI-4 wrappers exist only for a library whose headers declare the functions: the
    // persistent collectives, Isendrecv, partitioned communication, MPI_Comm_idup_with_info
    // and MPI_Comm_create_from_group (`mpi4`) in MPICH 4 and Open MPI 5 (whose headers still
    // say MPI_VERSION 3), the large-count forms and MPI_Intercomm_create_from_groups
    // (`mpi4_full`) in MPICH 4 alone; Open MPI 4.1 has none.
    println!("cargo::rustc-check-cfg=cfg(mpi4)");
    println!("cargo::rustc-check-cfg=cfg(mpi4_full)");
    let full = mpi_version(&abi) >= 4;
    if full || open_mpi_major(&abi) >= 5 {
        println!("cargo::rustc-cfg=mpi4");
    }
    if full {
        println!("cargo::rustc-cfg=mpi4_full");
    }
    abi.push_str("extern \"C\" {\n");
    for &(_, ty, suffix) in PREDEFINED {
        let rust = ty.trim_start_matches("MPI_");
        writeln!(abi, "    fn cd_mpi_{suffix}() -> {rust};").unwrap();
    }
    abi.push_str("}\n/// The predefined handles the runtime uses, read from the MPI library once.\n#[derive(Clone, Copy, Debug)]\npub struct Predefined {\n");
    for &(m, ty, suffix) in PREDEFINED {
        let rust = ty.trim_start_matches("MPI_");
        writeln!(abi, "    /// `{m}`.\n    pub {suffix}: {rust},").unwrap();
    }
    abi.push_str("}\nimpl Predefined {\n    /// Reads every handle from the shim.\n    ///\n    /// # Safety\n    /// An MPI library must be loaded (Open MPI's handles are addresses of its globals).\n    unsafe fn read() -> Predefined {\n        // SAFETY: the shim functions only evaluate the header's macros; the caller vouched\n        // for a loaded MPI library.\n        unsafe {\n            Predefined {\n");
    let globals = handle_globals(&mpicc, &out);
    for (&(_, ty, suffix), global) in PREDEFINED.iter().zip(&globals) {
        match global {
            // The weak reference did not bind when MPI came later (dlopen): look it up.
            Some(symbol) => writeln!(
                abi,
                "                {suffix}: match cd_mpi_{suffix}() {{ h if h.bits() == 0 => {rust}::from_bits(crate::resolve::lookup(c\"{symbol}\") as u64), h => h }},",
                rust = ty.trim_start_matches("MPI_")
            ),
            None => writeln!(abi, "                {suffix}: cd_mpi_{suffix}(),"),
        }
        .unwrap();
    }
    abi.push_str("            }\n        }\n    }\n}\n");
    fs::write(out.join("abi.rs"), abi).expect("write abi.rs");

    let mut weak: Vec<&String> = globals.iter().flatten().collect();
    weak.sort();
    weak.dedup();
    let mut header = String::from("/* generated by build.rs */\n#include <mpi.h>\n");
    for symbol in &weak {
        writeln!(header, "#pragma weak {symbol}").unwrap();
    }
    for &(macro_name, ty, suffix) in PREDEFINED {
        writeln!(
            header,
            "{ty} cd_mpi_{suffix}(void) {{ return {macro_name}; }}"
        )
        .unwrap();
    }
    fs::write(out.join("cd_shim_generated.h"), header).expect("write shim header");

    let mut build = cc::Build::new();
    build
        .compiler(&mpicc)
        .file("src/shim/shim.c")
        .include(&out)
        .flag_if_supported("-fvisibility=hidden")
        .warnings(true);
    build.compile("cd_mpi_shim");
}

/// The `MPI_VERSION` the probe printed.
fn mpi_version(abi: &str) -> i32 {
    abi.lines()
        .find_map(|l| l.strip_prefix("pub const VERSION: i32 = "))
        .and_then(|v| v.trim_end_matches(';').parse().ok())
        .expect("the probe prints MPI_VERSION")
}

/// Open MPI's major version from the family the probe printed (0 for another family).
fn open_mpi_major(abi: &str) -> u32 {
    abi.lines()
        .find_map(|l| l.strip_prefix("pub const FAMILY: &str = \"Open MPI "))
        .and_then(|v| v.split('.').next()?.parse().ok())
        .unwrap_or(0)
}

/// Compiles and runs a program that prints the ABI as Rust source.
fn probe(mpicc: &str, out: &Path) -> String {
    let mut c = String::from(
        "#define _GNU_SOURCE\n#include <mpi.h>\n#if defined(OPEN_MPI) && defined(__has_include)\n#if __has_include(<mpi-ext.h>)\n#include <mpi-ext.h>\n#endif\n#endif\n#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n\
         #include <dlfcn.h>\n#include <link.h>\n\
         #define KIND(x) (__builtin_classify_type(x) == 5 ? \"usize\" : \"i32\")\n\
         /* The loaded object that defines PMPI_Init: the MPI library. */\n\
         static int find_mpi(struct dl_phdr_info *info, size_t size, void *data) {\n\
           (void)size;\n\
           if (info->dlpi_name && info->dlpi_name[0]) {\n\
             void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);\n\
             if (h) { if (dlsym(h, \"PMPI_Init\")) *(const char **)data = info->dlpi_name; dlclose(h); }\n\
           }\n\
           return *(const char **)data != NULL;\n\
         }\n\
         int main(void) {\n\
           { const char *lib = NULL; dl_iterate_phdr(find_mpi, &lib);\n\
             printf(\"/// The MPI library this build was made against (loaded at run time if no MPI library is).\\npub const LIBRARY: &str = \\\"%s\\\";\\n\", lib ? lib : \"\"); }\n",
    );
    for &(cty, _) in HANDLE_TYPES {
        writeln!(
            c,
            "  {{ {cty} h; (void)h; if (sizeof({cty}) != (__builtin_classify_type(h) == 5 ? sizeof(void *) : sizeof(int))) return 2; \
             printf(\"/// The C type of `{cty}`.\\npub type Raw{rust} = %s;\\n\", KIND(h)); }}",
            rust = cty.trim_start_matches("MPI_")
        )
        .unwrap();
    }
    c.push_str(
        "  printf(\"/// Bytes of `MPI_Status`.\\npub const STATUS_SIZE: usize = %zu;\\n\", sizeof(MPI_Status));\n\
         printf(\"/// Alignment of `MPI_Status`.\\npub const STATUS_ALIGN: usize = %zu;\\n\", _Alignof(MPI_Status));\n\
         printf(\"/// An integer type with the alignment of `MPI_Status`.\\npub type StatusAlign = u%zu;\\n\", _Alignof(MPI_Status) * 8);\n\
         printf(\"/// Index (in ints) of `MPI_SOURCE` in `MPI_Status`.\\npub const STATUS_SOURCE: usize = %zu;\\n\", offsetof(MPI_Status, MPI_SOURCE) / sizeof(int));\n\
         printf(\"/// Index (in ints) of `MPI_TAG` in `MPI_Status`.\\npub const STATUS_TAG: usize = %zu;\\n\", offsetof(MPI_Status, MPI_TAG) / sizeof(int));\n\
         printf(\"/// Index (in ints) of `MPI_ERROR` in `MPI_Status`.\\npub const STATUS_ERROR: usize = %zu;\\n\", offsetof(MPI_Status, MPI_ERROR) / sizeof(int));\n\
         if (sizeof(MPI_Aint) != 8 || sizeof(MPI_Count) != 8) return 3;\n",
    );
    for &(m, name) in INT_CONSTANTS {
        writeln!(
            c,
            "  printf(\"/// `{m}`.\\npub const {name}: i32 = %d;\\n\", (int)({m}));"
        )
        .unwrap();
    }
    for &(m, name) in SENTINELS {
        writeln!(
            c,
            "  printf(\"/// `{m}`, as an address.\\npub const {name}: usize = %zu;\\n\", (size_t)(uintptr_t)({m}));"
        )
        .unwrap();
    }
    // ULFM's error classes, where the family's headers declare them (Open MPI 5's
    // `mpi-ext.h`; MPICH's `mpi.h`): `abi::ULFM`.
    c.push_str(
        "#if defined(MPIX_ERR_PROC_FAILED) && defined(MPIX_ERR_PROC_FAILED_PENDING) && defined(MPIX_ERR_REVOKED)\n\
         printf(\"/// ULFM's error classes in this family's headers.\\npub const ULFM: Option<UlfmClasses> = Some(UlfmClasses { proc_failed: %d, proc_failed_pending: %d, revoked: %d });\\n\", MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING, MPIX_ERR_REVOKED);\n\
         #else\n  printf(\"/// ULFM's error classes in this family's headers: none.\\npub const ULFM: Option<UlfmClasses> = None;\\n\");\n#endif\n",
    );
    c.push_str(
        "#if defined(OPEN_MPI)\n  printf(\"/// The MPI family this build is for.\\npub const FAMILY: &str = \\\"Open MPI %d.%d.%d\\\";\\n\", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);\n\
         #elif defined(MPICH_VERSION)\n  printf(\"/// The MPI family this build is for.\\npub const FAMILY: &str = \\\"MPICH %s\\\";\\n\", MPICH_VERSION);\n\
         #else\n  printf(\"/// The MPI family this build is for.\\npub const FAMILY: &str = \\\"unknown MPI\\\";\\n\");\n#endif\n\
         return 0;\n}\n",
    );
    let src = out.join("probe.c");
    let exe = out.join("probe");
    fs::write(&src, c).expect("write probe.c");
    // --no-as-needed: the probe calls no MPI function, yet must load the MPI library to name it.
    let status = Command::new(mpicc)
        .arg("-Wl,--no-as-needed")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("cannot run the MPI compiler `{mpicc}` (set MPICC): {e}"));
    assert!(
        status.success(),
        "`{mpicc}` failed to compile the ABI probe {}",
        src.display()
    );
    let output = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the ABI probe {}: {e}", exe.display()));
    assert!(
        output.status.success(),
        "the ABI probe failed ({}): this MPI's handles or MPI_Aint/MPI_Count are not of a supported size",
        output.status
    );
    String::from_utf8(output.stdout).expect("the probe prints ASCII")
}

/// For each predefined handle, the global symbol its macro takes the address of (Open MPI's
/// `&ompi_mpi_comm_world`, ...); none for MPICH, whose handles are integer constants.
fn handle_globals(mpicc: &str, out: &Path) -> Vec<Option<String>> {
    let mut c = String::from("#include <mpi.h>\n");
    for &(m, _, _) in PREDEFINED {
        writeln!(c, "CD_HANDLE {m}").unwrap();
    }
    let src = out.join("handles.c");
    fs::write(&src, c).expect("write handles.c");
    let output = Command::new(mpicc)
        .args(["-E", "-P"])
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{mpicc} -E`: {e}"));
    assert!(output.status.success(), "`{mpicc} -E` failed");
    let text = String::from_utf8_lossy(&output.stdout);
    let globals: Vec<Option<String>> = text
        .lines()
        .filter(|l| l.starts_with("CD_HANDLE"))
        .map(|line| {
            let i = line.find('&')?;
            let rest = line[i + 1..].trim_start_matches(|c: char| c == '(' || c.is_whitespace());
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!ident.is_empty()).then_some(ident)
        })
        .collect();
    assert_eq!(globals.len(), PREDEFINED.len(), "one line per handle");
    globals
}
