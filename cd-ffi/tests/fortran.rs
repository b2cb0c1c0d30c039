//! The Fortran programs of `tests/fortran/`, compiled with gfortran (`-Wall -Werror
//! -std=f2008`) against the installed `Containment_Domains` module and `libcd.so`, and run;
//! plus checks that the module's constants, interfaces and derived types equal the header's.

use crate::util::{compile_fortran, run, workspace};
use std::collections::BTreeMap;

fn fortran_program(name: &str) {
    fortran_program_with(name, &[]);
}

/// [`fortran_program`] with more environment variables.
fn fortran_program_with(name: &str, env: &[(&str, &str)]) {
    let source = workspace().join(format!("tests/fortran/{name}.f90"));
    let checks = workspace().join("tests/fortran/checks.f90");
    let exe = compile_fortran(&[&checks, &source], &format!("f-{name}"));
    let out = run(&exe, env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{name}: ok")),
        "{name} did not report success:\n{stdout}"
    );
}

#[test]
fn loop_with_add_advance_restore() {
    fortran_program("loop");
}

#[test]
fn regen_callback_in_fortran() {
    fortran_program("regen");
}

#[test]
fn error_paths() {
    fortran_program("errors");
}

/// `cd_get_advice` and the advised interval `cd_get_info` carries, with `CD_MTBF` given.
#[test]
fn advice_on_when_to_advance() {
    fortran_program_with("advice", &[("CD_MTBF", "100")]);
}

/// The built-in CUDA space, the asynchronous advance, a GPU reset and the remap from Fortran,
/// against the stand-in driver (`cd-cuda/standin/cuda_standin.c`, compiled here).
#[test]
fn cuda_async_advance_reset_and_remap() {
    let standin = crate::util::cuda_standin();
    fortran_program_with(
        "cuda",
        &[("CD_CUDA_LIBRARY", standin.to_str().expect("UTF-8 path"))],
    );
}

/// `NAME = value` pairs: `#define NAME int` and `NAME = int,` enum constants of cd.h.
fn header_constants() -> BTreeMap<String, i64> {
    let header = std::fs::read_to_string(workspace().join("cd-ffi/include/cd.h")).unwrap();
    let mut map = BTreeMap::new();
    for line in header.lines() {
        let line = line.trim();
        let pair = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split_once(' ')
        } else {
            line.strip_suffix(',').and_then(|l| l.split_once(" = "))
        };
        if let Some((name, value)) = pair {
            let value = value.trim().trim_start_matches('(').trim_end_matches(')');
            if let Ok(v) = value.parse::<i64>() {
                map.insert(name.trim().to_owned(), v);
            }
        }
    }
    map
}

#[test]
fn module_constants_equal_the_header() {
    let module =
        std::fs::read_to_string(workspace().join("fortran/containment_domains.f90")).unwrap();
    let header = header_constants();
    let mut fortran = BTreeMap::new();
    for line in module.lines() {
        if let Some((_, rest)) = line.split_once("parameter ::") {
            let (name, value) = rest.split_once('=').expect("NAME = value");
            let value: i64 = value.trim().parse().expect("integer parameter");
            fortran.insert(name.trim().to_owned(), value);
        }
    }
    for (name, value) in &fortran {
        assert_eq!(
            header.get(name),
            Some(value),
            "Fortran parameter {name} = {value} differs from cd.h"
        );
    }
    for (name, value) in &header {
        if name.starts_with("CD_ERR_")
            || name.starts_with("COMM_LOGGING_")
            || name.starts_with("MPI_LOGGING_")
            || [
                "SUCCESS",
                "FAILURE",
                "READ_ONLY",
                "READ_WRITE",
                "GLOBAL",
                "CONSTRAINED",
            ]
            .contains(&name.as_str())
        {
            assert_eq!(
                fortran.get(name),
                Some(value),
                "cd.h's {name} = {value} is missing from the Fortran module"
            );
        }
    }
    assert!(fortran.len() > 50);
}

/// The C shape of a parameter, a result or a struct field, as both sides are compared: the
/// type with `const`, `struct` and blanks removed, fixed-width integers by size, every data
/// pointer (`void *`, `char *`, `cd_handle`) as `ptr` (`void **` as `ptr*`), every function
/// pointer as `funptr`.
fn c_shape(ty: &str) -> String {
    let ty: String = ty
        .replace("const ", "")
        .replace("struct ", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let sized = |base: &str| match base {
        "uint64_t" | "int64_t" => "i64".to_owned(),
        "uint32_t" | "int32_t" => "i32".to_owned(),
        other => other.to_owned(),
    };
    match ty.as_str() {
        "void*" | "char*" | "cd_handle" => "ptr".to_owned(),
        "void**" => "ptr*".to_owned(),
        "cd_regen_fn" | "cd_copy_to_host_fn" | "cd_copy_to_device_fn" => "funptr".to_owned(),
        other => match other.strip_suffix('*') {
            Some(base) => format!("{}*", sized(base)),
            None => sized(other),
        },
    }
}

/// The C shape a Fortran declaration (`integer(c_int), value`, `type(cd_stats), intent(out)`,
/// `character(kind=c_char) ... buf(*)`) passes or holds; with `by_reference`, a dummy argument
/// without `value` is passed by reference (a pointer to its type).
fn fortran_shape(declaration: &str, by_reference: bool) -> String {
    let d = declaration.to_ascii_lowercase().replace(' ', "");
    let base = if d.starts_with("type(c_ptr)") {
        "ptr".to_owned()
    } else if d.starts_with("type(c_funptr)") {
        "funptr".to_owned()
    } else if let Some(rest) = d.strip_prefix("type(") {
        rest.split(')').next().unwrap_or_default().to_owned()
    } else if d.starts_with("character(kind=c_char)") {
        "char".to_owned()
    } else if let Some(rest) = d.strip_prefix("integer(") {
        match rest.split(')').next().unwrap_or_default() {
            "c_int" => "int",
            "c_size_t" => "size_t",
            "c_int64_t" => "i64",
            "c_int32_t" => "i32",
            other => panic!("Fortran kind {other} has no C shape here"),
        }
        .to_owned()
    } else {
        panic!("unexpected Fortran declaration {declaration:?}")
    };
    if by_reference && !d.contains(",value") {
        // A reference to data: a pointer to `char` is a string (`ptr`), others keep the type.
        if base == "char" {
            "ptr".to_owned()
        } else {
            format!("{base}*")
        }
    } else {
        base
    }
}

/// cd.h without comments, on one line.
fn header_code() -> String {
    let text = std::fs::read_to_string(workspace().join("cd-ffi/include/cd.h")).unwrap();
    let mut code = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    code.push_str(rest);
    code.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && *l != "extern \"C\" {" && *l != "}")
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits `type name` (a parameter or a field) into its shape and name.
fn c_declaration(decl: &str) -> (String, String) {
    let decl = decl.trim();
    let split = decl
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .expect("a type before the name");
    (c_shape(&decl[..=split]), decl[split + 1..].to_owned())
}

/// Every function cd.h declares: name -> (result shape, parameter shapes).
fn header_functions() -> BTreeMap<String, (String, Vec<String>)> {
    let code = header_code();
    let mut functions = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        if let Some(pointer) = statement.strip_prefix("typedef ") {
            // `typedef int (*cd_regen_fn)(struct cd_addrspec *addrlist, int ascount)`
            if let Some((result, rest)) = pointer.split_once("(*") {
                let (name, params) = rest.split_once(")(").expect("a function pointer type");
                let params = params.strip_suffix(')').expect("parameters end");
                let params = params.split(',').map(|p| c_declaration(p).0).collect();
                functions.insert(name.trim().to_owned(), (c_shape(result), params));
            }
            continue;
        }
        if statement.contains('{') || statement.contains('}') {
            continue;
        }
        let Some(open) = statement.find('(') else {
            continue;
        };
        let Some(params) = statement[open + 1..].strip_suffix(')') else {
            continue;
        };
        let (result, name) = c_declaration(&statement[..open]);
        let params = if params.trim() == "void" {
            Vec::new()
        } else {
            params.split(',').map(|p| c_declaration(p).0).collect()
        };
        functions.insert(name, (result, params));
    }
    functions
}

/// Every struct cd.h defines: name -> field (shape, name) pairs in order.
fn header_structs() -> BTreeMap<String, Vec<(String, String)>> {
    let code = header_code();
    let mut structs = BTreeMap::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("typedef struct ") {
        let after = &rest[at + "typedef struct ".len()..];
        let name = after
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        let body_start = after.find('{').expect("struct body");
        let body_end = after.find('}').expect("struct end");
        let fields = after[body_start + 1..body_end]
            .split(';')
            .filter(|f| !f.trim().is_empty())
            .map(c_declaration)
            .collect();
        structs.insert(name, fields);
        rest = &after[body_end..];
    }
    structs
}

/// The Fortran module's source, free of comments, one statement per line.
fn module_lines() -> Vec<String> {
    let module =
        std::fs::read_to_string(workspace().join("fortran/containment_domains.f90")).unwrap();
    module
        .lines()
        .map(|l| l.split('!').next().unwrap_or_default().trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The names a declaration line declares (`:: a, b(*)` -> `a`, `b`) with its attributes.
fn declared(line: &str) -> Option<(String, Vec<String>)> {
    let (attributes, names) = line.split_once("::")?;
    let names = names
        .split(',')
        .map(|n| {
            n.split('(')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    Some((attributes.trim().to_owned(), names))
}

/// Every bind(C) function of the module's interface blocks: C name -> (result shape, argument
/// shapes); those of abstract interfaces (callback shapes) under their Fortran names.
fn module_functions() -> BTreeMap<String, (String, Vec<String>)> {
    let lines = module_lines();
    let mut functions = BTreeMap::new();
    let mut in_interface = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].to_ascii_lowercase();
        if line == "interface" || line == "abstract interface" {
            in_interface = true;
        } else if line == "end interface" {
            in_interface = false;
        } else if in_interface && line.starts_with("function ") {
            let original = &lines[i];
            let open = original.find('(').expect("argument list");
            let close = original.find(')').expect("argument list end");
            let fname = original["function ".len()..open]
                .trim()
                .to_ascii_lowercase();
            let args: Vec<String> = original[open + 1..close]
                .split(',')
                .map(|a| a.trim().to_ascii_lowercase())
                .filter(|a| !a.is_empty())
                .collect();
            let c_name = original
                .split_once("name=\"")
                .and_then(|(_, r)| r.split('"').next())
                .map_or_else(|| fname.clone(), str::to_owned);
            assert!(line.contains("bind(c"), "interface {fname} is not bind(C)");
            let mut declarations = BTreeMap::new();
            i += 1;
            while !lines[i].to_ascii_lowercase().starts_with("end function") {
                if let Some((attributes, names)) = declared(&lines[i]) {
                    for name in names {
                        declarations.insert(name, attributes.clone());
                    }
                }
                i += 1;
            }
            let result = fortran_shape(
                declarations
                    .get(&fname)
                    .unwrap_or_else(|| panic!("{fname}: no result declaration")),
                false,
            );
            let shapes = args
                .iter()
                .map(|a| {
                    let d = declarations
                        .get(a)
                        .unwrap_or_else(|| panic!("{fname}: argument {a} is not declared"));
                    fortran_shape(d, true)
                })
                .collect();
            functions.insert(c_name, (result, shapes));
        }
        i += 1;
    }
    functions
}

/// Every bind(C) derived type of the module: name -> field (shape, name) pairs in order.
fn module_types() -> BTreeMap<String, Vec<(String, String)>> {
    let lines = module_lines();
    let mut types = BTreeMap::new();
    let mut current: Option<(String, Vec<(String, String)>)> = None;
    for line in &lines {
        let lower = line.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("type, bind(c) ::") {
            current = Some((rest.trim().to_owned(), Vec::new()));
        } else if lower.starts_with("end type") {
            let (name, fields) = current.take().expect("a type was open");
            types.insert(name, fields);
        } else if let Some((_, fields)) = current.as_mut() {
            let (attributes, names) = declared(&lower).expect("a field declaration");
            for name in names {
                fields.push((fortran_shape(&attributes, false), name));
            }
        }
    }
    types
}

/// C functions of cd.h that the Fortran module leaves out on purpose, with why.
const NOT_BOUND: &[(&str, &str)] = &[
    (
        "cd_error_string",
        "a C string: Fortran uses cd_error_message, which copies into a buffer",
    ),
    (
        "cd_error_name",
        "a C string for C programs' messages; cd_error_message serves Fortran",
    ),
    (
        "cd_version",
        "a C string; the version is in the module's documentation",
    ),
    (
        "cd_get_entries",
        "an introspection call for tools; its struct is not bound",
    ),
    (
        "cd_copy_to_host_fn",
        "written in Fortran as the comment at cd_register_memory_space says",
    ),
    ("cd_copy_to_device_fn", "the same"),
];

/// Callback shapes: the module's abstract interface, and the cd.h typedef it must equal.
const CALLBACKS: &[(&str, &str)] = &[("cd_regen_function", "cd_regen_fn")];

/// Every interface of the Fortran module declares what cd.h declares: the same C name, result
/// and parameters in order (by value or by reference as the C types say), every derived type
/// has the C struct's fields in order, and every C function is bound or listed in
/// [`NOT_BOUND`] with a reason. A mismatch here would corrupt memory at run time, which no
/// compiler reports across the two languages.
#[test]
fn module_interfaces_equal_the_header() {
    let header = header_functions();
    let module = module_functions();
    assert!(
        header.len() >= 25 && module.len() >= 20,
        "parsers found too little: {header:?} {module:?}"
    );
    for (name, fortran) in &module {
        let c_name = CALLBACKS
            .iter()
            .find(|(f, _)| f == name)
            .map_or(name.as_str(), |(_, c)| c);
        let c = header
            .get(c_name)
            .unwrap_or_else(|| panic!("the Fortran module binds {name}, which cd.h lacks"));
        assert_eq!(fortran, c, "{name}: Fortran (result, arguments) vs cd.h");
    }
    for name in header.keys() {
        let excused = NOT_BOUND.iter().any(|(n, _)| n == name);
        let bound = module.contains_key(name) || CALLBACKS.iter().any(|(_, c)| c == name);
        assert!(
            bound != excused,
            "{name}: {} (bind it in fortran/containment_domains.f90, or list it in NOT_BOUND \
             with the reason)",
            if excused {
                "is bound and also listed in NOT_BOUND"
            } else {
                "is in cd.h but not in the Fortran module"
            }
        );
    }
    let structs = header_structs();
    let types = module_types();
    assert_eq!(types.len(), 3, "{types:?}");
    for (name, fields) in &types {
        let c = structs
            .get(name)
            .unwrap_or_else(|| panic!("Fortran type {name} has no struct in cd.h"));
        assert_eq!(fields, c, "type {name}: Fortran fields vs cd.h");
    }
}
