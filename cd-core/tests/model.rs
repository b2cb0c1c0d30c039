//! Random sequences of operations, run both on the runtime and on a reference model of the
//! spec that is deliberately naive: every CD holds one optional entry per byte of a small
//! memory. After every operation the test compares application memory, every live CD's labels
//! (per byte) and saved bytes, and whether the operation failed.

use crate::util::{unique, Mem};
use cd_core::*;
use proptest::prelude::*;
use std::mem::discriminant;

/// Ranges up to 24 bytes: adds of up to 16 bytes keep their data inline, longer ones (and
/// every advance) use shared buffers; both paths are exercised.
const SIZE: usize = 64;
const REGENS: u8 = 3;

/// What a regen function with `id` writes at byte `offset`.
fn regen_value(id: u8, offset: usize) -> u8 {
    (id as usize * 31 + offset * 7 + 1) as u8
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum MHow {
    Copy(u8),
    Parent,
    Regen(u8),
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct MByte {
    how: MHow,
    rw: bool,
    constrained: bool,
}

struct MCd {
    handle: CdHandle,
    parent: Option<usize>,
    children: Vec<usize>,
    bytes: Vec<Option<MByte>>,
    had_siblings: bool,
    live: bool,
}

struct Model {
    mem: Vec<u8>,
    cds: Vec<MCd>,
}

#[derive(Clone, Debug)]
enum Op {
    Write(usize, usize, u8),
    AddCopy(usize, usize, usize, bool, bool),
    AddParent(usize, usize, usize, bool),
    AddRegen(usize, usize, usize, u8),
    Delete(usize, usize, usize),
    Create(usize),
    Commit(usize),
    Advance(usize),
    Restore(usize),
}

fn range() -> impl Strategy<Value = (usize, usize)> {
    (0..SIZE - 1).prop_flat_map(|s| (Just(s), 1..=(SIZE - s).min(24)))
}

fn op() -> impl Strategy<Value = Op> {
    let cd = 0usize..8;
    prop_oneof![
        3 => (range(), any::<u8>()).prop_map(|((s, l), v)| Op::Write(s, l, v)),
        4 => (cd.clone(), range(), any::<bool>(), prop::bool::weighted(0.15))
            .prop_map(|(c, (s, l), rw, k)| Op::AddCopy(c, s, l, rw, k)),
        2 => (cd.clone(), range(), any::<bool>()).prop_map(|(c, (s, l), rw)| Op::AddParent(c, s, l, rw)),
        1 => (cd.clone(), range(), 0..REGENS).prop_map(|(c, (s, l), id)| Op::AddRegen(c, s, l, id)),
        1 => (cd.clone(), range()).prop_map(|(c, (s, l))| Op::Delete(c, s, l)),
        2 => cd.clone().prop_map(Op::Create),
        2 => cd.clone().prop_map(Op::Commit),
        2 => cd.clone().prop_map(Op::Advance),
        2 => cd.prop_map(Op::Restore),
    ]
}

impl Model {
    fn live(&self) -> Vec<usize> {
        (0..self.cds.len()).filter(|&i| self.cds[i].live).collect()
    }

    fn ancestors(&self, cd: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut up = self.cds[cd].parent;
        while let Some(p) = up {
            out.push(p);
            up = self.cds[p].parent;
        }
        out
    }

    /// The add rules; returns the error the runtime must give, if any.
    fn add(
        &mut self,
        cd: usize,
        s: usize,
        e: usize,
        how: MHow,
        rw: bool,
        constrained: bool,
    ) -> Option<CdError> {
        if matches!(how, MHow::Regen(_)) && rw {
            return Some(CdError::ReadWriteRegen { address: 0 });
        }
        if how == MHow::Parent {
            let chain = self.ancestors(cd);
            if chain.is_empty() {
                return Some(CdError::NoParent);
            }
            let mut missing = false;
            for i in s..e {
                let mut found = false;
                for &a in &chain {
                    match self.cds[a].bytes[i].map(|b| b.how) {
                        Some(MHow::Copy(_)) => {
                            found = true;
                            break;
                        }
                        Some(MHow::Regen(_)) => {
                            return Some(CdError::RegenAncestor { address: 0, end: 0 })
                        }
                        Some(MHow::Parent) | None => {}
                    }
                }
                missing |= !found;
            }
            if missing {
                return Some(CdError::NotInAncestor { address: 0, end: 0 });
            }
        }
        for i in s..e {
            if let Some(old) = self.cds[cd].bytes[i] {
                if old.constrained != constrained {
                    return Some(CdError::ScopeChange {
                        address: 0,
                        existing: "",
                    });
                }
                if rw && matches!(old.how, MHow::Regen(_)) {
                    return Some(CdError::PromoteRegen { address: 0 });
                }
            }
        }
        for i in s..e {
            let how = match how {
                MHow::Copy(_) => MHow::Copy(self.mem[i]),
                other => other,
            };
            let slot = &mut self.cds[cd].bytes[i];
            match slot {
                Some(old) => old.rw = rw,
                None => {
                    *slot = Some(MByte {
                        how,
                        rw,
                        constrained,
                    })
                }
            }
        }
        None
    }

    fn merge_into_parent(&mut self, cd: usize) {
        let Some(p) = self.cds[cd].parent else { return };
        for i in 0..SIZE {
            let Some(c) = self.cds[cd].bytes[i] else {
                continue;
            };
            if c.constrained {
                continue;
            }
            match &mut self.cds[p].bytes[i] {
                Some(pb) => {
                    if c.rw && !matches!(pb.how, MHow::Regen(_)) {
                        pb.rw = true;
                    }
                }
                slot @ None => *slot = Some(c),
            }
        }
    }

    fn commit(&mut self, cd: usize) -> Option<CdError> {
        if !self.cds[cd].children.is_empty() {
            return Some(CdError::HasChildren {
                operation: "",
                children: 0,
            });
        }
        self.merge_into_parent(cd);
        if let Some(p) = self.cds[cd].parent {
            self.cds[p].children.retain(|&c| c != cd);
        }
        self.cds[cd].live = false;
        None
    }

    fn advance(&mut self, cd: usize) -> Option<CdError> {
        if !self.cds[cd].children.is_empty() {
            return Some(CdError::HasChildren {
                operation: "",
                children: 0,
            });
        }
        self.merge_into_parent(cd);
        let mem = self.mem.clone();
        for (i, b) in self.cds[cd].bytes.iter_mut().enumerate() {
            if let Some(b) = b {
                if b.rw {
                    if let MHow::Copy(v) = &mut b.how {
                        *v = mem[i];
                    }
                    b.rw = false;
                }
            }
        }
        None
    }

    fn preorder(&self, cd: usize, out: &mut Vec<usize>) {
        out.push(cd);
        for &c in &self.cds[cd].children {
            self.preorder(c, out);
        }
    }

    /// Restores; `None` when the model finds the restore must fail (memory is then resynced).
    fn restore(&mut self, cd: usize) -> Option<()> {
        let mut order = Vec::new();
        self.preorder(cd, &mut order);
        for &n in order.iter().rev() {
            let bytes = self.cds[n].bytes.clone();
            for (i, b) in bytes.iter().enumerate() {
                if let Some(MByte {
                    how: MHow::Copy(v), ..
                }) = b
                {
                    self.mem[i] = *v;
                }
            }
            for (i, b) in bytes.iter().enumerate() {
                if matches!(
                    b,
                    Some(MByte {
                        how: MHow::Parent,
                        ..
                    })
                ) {
                    let mut value = None;
                    for a in self.ancestors(n) {
                        match self.cds[a].bytes[i].map(|b| b.how) {
                            Some(MHow::Copy(v)) => {
                                value = Some(v);
                                break;
                            }
                            Some(MHow::Regen(_)) => return None,
                            _ => {}
                        }
                    }
                    self.mem[i] = value?;
                }
            }
            for (i, b) in bytes.iter().enumerate() {
                if let Some(MByte {
                    how: MHow::Regen(id),
                    ..
                }) = b
                {
                    self.mem[i] = regen_value(*id, i);
                }
            }
        }
        for &n in &order[1..] {
            self.cds[n].live = false;
        }
        self.cds[cd].children.clear();
        Some(())
    }
}

/// Runs one operation on both; returns an error message on disagreement.
fn step(model: &mut Model, mem: &Mem, regens: &[Regen], op: &Op) -> Result<(), String> {
    let live = model.live();
    let pick = |k: usize| live.get(k % live.len().max(1)).copied();
    let spec = |s: usize, l: usize, rw: bool, constrained: bool| {
        let access = if rw {
            Access::ReadWrite
        } else {
            Access::ReadOnly
        };
        let scope = if constrained {
            Scope::Constrained
        } else {
            Scope::Global
        };
        AddrSpec::new(mem.addr(s), l, access, scope)
    };
    let compare = |expected: Option<CdError>, got: Result<(), CdError>| -> Result<(), String> {
        match (expected, got) {
            (None, Ok(())) => Ok(()),
            (Some(e), Err(g)) if discriminant(&e) == discriminant(&g) => Ok(()),
            (e, g) => Err(format!("{op:?}: model says {e:?}, runtime says {g:?}")),
        }
    };
    match *op {
        Op::Write(s, l, v) => {
            mem.fill(s, l, v);
            model.mem[s..s + l].fill(v);
        }
        Op::AddCopy(k, s, l, rw, c) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let expected = model.add(cd, s, s + l, MHow::Copy(0), rw, c);
            // SAFETY: `mem` outlives every CD of the case; nothing else touches it.
            let got = unsafe { add_to_cd_via_copy(model.cds[cd].handle, &[spec(s, l, rw, c)]) };
            compare(expected, got)?;
        }
        Op::AddParent(k, s, l, rw) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let expected = model.add(cd, s, s + l, MHow::Parent, rw, false);
            let got = add_to_cd_via_parent(model.cds[cd].handle, &[spec(s, l, rw, false)]);
            compare(expected, got)?;
        }
        Op::AddRegen(k, s, l, id) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let expected = model.add(cd, s, s + l, MHow::Regen(id), false, false);
            let got = add_to_cd_via_regen(
                model.cds[cd].handle,
                &[spec(s, l, false, false)],
                regens[id as usize].clone(),
            );
            compare(expected, got)?;
        }
        Op::Delete(k, s, l) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let bytes = &mut model.cds[cd].bytes[s..s + l];
            let expected = if bytes.iter().all(Option::is_some) {
                bytes.fill(None);
                None
            } else {
                Some(CdError::RangeNotFound { address: 0, end: 0 })
            };
            compare(
                expected,
                delete_from_cd(model.cds[cd].handle, &[spec(s, l, false, false)]),
            )?;
        }
        Op::Create(k) => {
            let parent = pick(k);
            let handle = match parent {
                Some(p) => create_cd(
                    Some(model.cds[p].handle.into()),
                    None,
                    LoggingMode::Inherit,
                    None,
                ),
                None => create_cd(None, None, LoggingMode::Disabled, Some(&unique("model"))),
            }
            .map_err(|e| format!("create: {e}"))?;
            let index = model.cds.len();
            let mut had_siblings = false;
            if let Some(p) = parent {
                had_siblings = !model.cds[p].children.is_empty();
                for c in model.cds[p].children.clone() {
                    model.cds[c].had_siblings = true;
                }
                model.cds[p].children.push(index);
            }
            model.cds.push(MCd {
                handle,
                parent,
                children: Vec::new(),
                bytes: vec![None; SIZE],
                had_siblings,
                live: true,
            });
        }
        Op::Commit(k) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let expected = model.commit(cd);
            compare(expected, commit_cd(model.cds[cd].handle))?;
        }
        Op::Advance(k) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            let expected = model.advance(cd);
            // SAFETY: as for AddCopy.
            let got = unsafe { advance_cd_point_in_time(model.cds[cd].handle) }.map(drop);
            compare(expected, got)?;
        }
        Op::Restore(k) => {
            let Some(cd) = pick(k) else { return Ok(()) };
            // SAFETY: as for AddCopy.
            let got = unsafe { restore_cd(model.cds[cd].handle) }.map(drop);
            match (model.restore(cd), got) {
                (Some(()), Ok(())) => {}
                (None, Err(_)) => model.mem = mem.bytes(0, SIZE), // partial restore: resync
                (m, g) => return Err(format!("{op:?}: model {m:?}, runtime {g:?}")),
            }
        }
    }
    check(model, mem).map_err(|e| format!("after {op:?}: {e}"))
}

/// Compares memory, and each live CD's labels and saved bytes, byte by byte.
fn check(model: &Model, mem: &Mem) -> Result<(), String> {
    if mem.bytes(0, SIZE) != model.mem {
        return Err(format!(
            "memory {:?} != model {:?}",
            mem.bytes(0, SIZE),
            model.mem
        ));
    }
    for (n, cd) in model.cds.iter().enumerate().filter(|(_, c)| c.live) {
        let info = cd_info(cd.handle).map_err(|e| format!("cd {n}: {e}"))?;
        if info.had_siblings != cd.had_siblings || info.children != cd.children.len() {
            return Err(format!("cd {n}: tree shape differs"));
        }
        let mut got: Vec<Option<(Restoration, bool, bool)>> = vec![None; SIZE];
        for e in cd_entries(cd.handle).unwrap() {
            let off = e.address - mem.addr(0);
            for slot in &mut got[off..off + e.length] {
                *slot = Some((
                    e.restoration,
                    e.access == Access::ReadWrite,
                    e.scope == Scope::Constrained,
                ));
            }
            if e.restoration == Restoration::Copy {
                let saved = cd_saved_bytes(cd.handle, e.address, e.length).unwrap();
                for (i, v) in saved.into_iter().enumerate() {
                    if cd.bytes[off + i].map(|b| b.how) != Some(MHow::Copy(v)) {
                        return Err(format!(
                            "cd {n}: saved byte {} is {v}, model {:?}",
                            off + i,
                            cd.bytes[off + i]
                        ));
                    }
                }
            }
        }
        let want: Vec<Option<(Restoration, bool, bool)>> = cd
            .bytes
            .iter()
            .map(|b| {
                b.map(|b| {
                    let r = match b.how {
                        MHow::Copy(_) => Restoration::Copy,
                        MHow::Parent => Restoration::Parent,
                        MHow::Regen(_) => Restoration::Regen,
                    };
                    (r, b.rw, b.constrained)
                })
            })
            .collect();
        if got != want {
            return Err(format!("cd {n}: labels {got:?}\n model {want:?}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn runtime_agrees_with_the_reference_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mem = Mem::new(SIZE);
        let base = mem.addr(0);
        let regens: Vec<Regen> = (0..REGENS)
            .map(|id| {
                Regen::new(move |specs| {
                    for s in specs {
                        for a in s.address..s.address + s.length {
                            // SAFETY: regen entries lie in the case's live memory block.
                            unsafe {
                                std::ptr::write_volatile(
                                    std::ptr::with_exposed_provenance_mut::<u8>(a),
                                    regen_value(id, a - base),
                                )
                            };
                        }
                    }
                    0
                })
            })
            .collect();
        let mut model = Model { mem: vec![0; SIZE], cds: Vec::new() };
        step(&mut model, &mem, &regens, &Op::Create(0)).unwrap();
        let mut failure = None;
        for op in &ops {
            if let Err(e) = step(&mut model, &mem, &regens, op) {
                failure = Some(e);
                break;
            }
        }
        // Tear down: commit the live CDs, leaves first.
        for n in (0..model.cds.len()).rev() {
            if model.cds[n].live {
                let _ = commit_cd(model.cds[n].handle);
            }
        }
        if let Some(e) = failure {
            return Err(TestCaseError::fail(e));
        }
    }
}
