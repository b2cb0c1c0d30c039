//! A derived communicator's virtual topology, kept so that a repair can make the communicator
//! again on the same members (`crate::derived`, `crate::recovery::resync`): Cartesian, graph,
//! or distributed graph.
//!
//! A Cartesian or graph topology is the same on every member, so any survivor describes it
//! whole. A distributed graph is not: each member gave only its own neighbours, and those of a
//! lost member are gone with it. So when a distributed graph is made, its members exchange
//! their neighbour lists once ([`Topology::of`], collective over the new communicator), and
//! every member keeps all of them: a repair then gives the replacement its own, in the order
//! its application gave them (the order of a neighbourhood collective's blocks).

use crate::abi::{self, Comm};
use crate::pmpi::{real, safe};
use crate::wire;
use std::ffi::c_int;

/// One member's neighbours in a distributed graph, as `MPI_Dist_graph_neighbors` gives them.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Adjacency {
    pub(crate) sources: Vec<c_int>,
    source_weights: Vec<c_int>,
    pub(crate) destinations: Vec<c_int>,
    destination_weights: Vec<c_int>,
}

/// A communicator's virtual topology.
#[derive(Clone, PartialEq)]
pub(crate) enum Topology {
    /// Dimensions and periodicity.
    Cart {
        dims: Vec<c_int>,
        periods: Vec<c_int>,
    },
    /// The whole graph, as every member gave it to `MPI_Graph_create`.
    Graph {
        index: Vec<c_int>,
        edges: Vec<c_int>,
    },
    /// Every member's neighbours, by rank, and whether they have weights.
    DistGraph {
        weighted: bool,
        members: Vec<Adjacency>,
    },
}

impl Topology {
    /// The topology of `comm` (a member's), if it has one. For a distributed graph this is
    /// collective over `comm` (see the module docs).
    pub(crate) fn of(comm: Comm) -> Option<Topology> {
        match safe::topo_test(comm) {
            k if k == abi::CART => Some(cart(comm)),
            k if k == abi::GRAPH => Some(graph(comm)),
            k if k == abi::DIST_GRAPH => dist_graph(comm),
            _ => None,
        }
    }

    /// Makes the topology on `split` (its members in the original rank order), whose rank
    /// `rank` this process is; frees `split`.
    pub(crate) fn make(&self, mut split: Comm, rank: usize) -> Result<Comm, c_int> {
        let mut made = abi::predefined().comm_null;
        // SAFETY: each array holds the count given with it; MPI writes one handle. No rank is
        // reordered: the split already has the original order.
        let rc = unsafe {
            match self {
                Topology::Cart { dims, periods } => real::Cart_create(
                    split,
                    dims.len() as c_int,
                    dims.as_ptr(),
                    periods.as_ptr(),
                    0,
                    &mut made,
                ),
                Topology::Graph { index, edges } => real::Graph_create(
                    split,
                    index.len() as c_int,
                    index.as_ptr(),
                    edges.as_ptr(),
                    0,
                    &mut made,
                ),
                Topology::DistGraph { weighted, members } => {
                    let mine = members.get(rank).cloned().unwrap_or_default();
                    let weights = |w: &Vec<c_int>| match weighted {
                        true => w.as_ptr(),
                        false => std::ptr::with_exposed_provenance(abi::UNWEIGHTED),
                    };
                    real::Dist_graph_create_adjacent(
                        split,
                        mine.sources.len() as c_int,
                        mine.sources.as_ptr(),
                        weights(&mine.source_weights),
                        mine.destinations.len() as c_int,
                        mine.destinations.as_ptr(),
                        weights(&mine.destination_weights),
                        abi::predefined().info_null,
                        0,
                        &mut made,
                    )
                }
            }
        };
        // SAFETY: the caller's communicator, no longer needed.
        unsafe { real::Comm_free(&mut split) };
        if rc == abi::SUCCESS {
            Ok(made)
        } else {
            Err(rc)
        }
    }

    /// Appends its description to `out` (read back by [`Topology::decode`]).
    pub(crate) fn encode(topology: Option<&Topology>, out: &mut Vec<u8>) {
        let lists: Vec<&Vec<c_int>> = match topology {
            None => {
                out.push(0);
                return;
            }
            Some(Topology::Cart { dims, periods }) => {
                out.push(1);
                vec![dims, periods]
            }
            Some(Topology::Graph { index, edges }) => {
                out.push(2);
                vec![index, edges]
            }
            Some(Topology::DistGraph { weighted, members }) => {
                out.push(3 + u8::from(*weighted));
                wire::put_u64(members.len() as u64, out);
                members.iter().flat_map(Adjacency::lists).collect()
            }
        };
        for list in lists {
            wire::put_ints(list, out);
        }
    }

    /// Reads a description [`Topology::encode`] wrote at `at` in `bytes`, moving `at` past it.
    pub(crate) fn decode(bytes: &[u8], at: &mut usize) -> Result<Option<Topology>, String> {
        let kind = *bytes.get(*at).ok_or("a malformed topology")?;
        *at += 1;
        Ok(match kind {
            0 => None,
            1 => Some(Topology::Cart {
                dims: wire::ints_at(bytes, at)?,
                periods: wire::ints_at(bytes, at)?,
            }),
            2 => Some(Topology::Graph {
                index: wire::ints_at(bytes, at)?,
                edges: wire::ints_at(bytes, at)?,
            }),
            3 | 4 => {
                let n = wire::u64_at(bytes, at)?;
                let members = (0..n)
                    .map(|_| Adjacency::decode(bytes, at))
                    .collect::<Result<_, String>>()?;
                Some(Topology::DistGraph {
                    weighted: kind == 4,
                    members,
                })
            }
            _ => return Err("a malformed topology".to_owned()),
        })
    }
}

impl Adjacency {
    /// This rank's neighbours in the distributed graph `comm`, and whether they have weights.
    pub(crate) fn own(comm: Comm) -> (Adjacency, bool) {
        let (mut indegree, mut outdegree, mut weighted): (c_int, c_int, c_int) = (0, 0, 0);
        // SAFETY: writes three ints.
        unsafe {
            real::Dist_graph_neighbors_count(comm, &mut indegree, &mut outdegree, &mut weighted)
        };
        let (i, o) = (indegree.max(0) as usize, outdegree.max(0) as usize);
        let mut mine = Adjacency {
            sources: vec![0; i],
            source_weights: vec![0; i],
            destinations: vec![0; o],
            destination_weights: vec![0; o],
        };
        // SAFETY: arrays of `indegree` and `outdegree` ints (the weights are written only for
        // a weighted graph).
        unsafe {
            real::Dist_graph_neighbors(
                comm,
                indegree,
                mine.sources.as_mut_ptr(),
                mine.source_weights.as_mut_ptr(),
                outdegree,
                mine.destinations.as_mut_ptr(),
                mine.destination_weights.as_mut_ptr(),
            )
        };
        (mine, weighted != 0)
    }

    fn lists(&self) -> [&Vec<c_int>; 4] {
        [
            &self.sources,
            &self.source_weights,
            &self.destinations,
            &self.destination_weights,
        ]
    }

    fn decode(bytes: &[u8], at: &mut usize) -> Result<Adjacency, String> {
        Ok(Adjacency {
            sources: wire::ints_at(bytes, at)?,
            source_weights: wire::ints_at(bytes, at)?,
            destinations: wire::ints_at(bytes, at)?,
            destination_weights: wire::ints_at(bytes, at)?,
        })
    }
}

fn cart(comm: Comm) -> Topology {
    let ndims = safe::cartdim_get(comm);
    let n = ndims.max(0) as usize;
    let (mut dims, mut periods, mut coords) = (vec![0; n], vec![0; n], vec![0; n]);
    // SAFETY: three arrays of `ndims` ints.
    unsafe {
        real::Cart_get(
            comm,
            ndims,
            dims.as_mut_ptr(),
            periods.as_mut_ptr(),
            coords.as_mut_ptr(),
        )
    };
    Topology::Cart { dims, periods }
}

fn graph(comm: Comm) -> Topology {
    let (mut nnodes, mut nedges): (c_int, c_int) = (0, 0);
    // SAFETY: writes two ints.
    unsafe { real::Graphdims_get(comm, &mut nnodes, &mut nedges) };
    let (mut index, mut edges) = (
        vec![0; nnodes.max(0) as usize],
        vec![0; nedges.max(0) as usize],
    );
    // SAFETY: arrays of `nnodes` and `nedges` ints.
    unsafe { real::Graph_get(comm, nnodes, nedges, index.as_mut_ptr(), edges.as_mut_ptr()) };
    Topology::Graph { index, edges }
}

/// Every member's neighbours (collective over `comm`; see the module docs).
fn dist_graph(comm: Comm) -> Option<Topology> {
    let (mine, weighted) = Adjacency::own(comm);
    let mut bytes = Vec::new();
    for list in mine.lists() {
        wire::put_ints(list, &mut bytes);
    }
    let all = safe::allgather_bytes(comm, &bytes).ok()?;
    let members = all
        .iter()
        .map(|b| Adjacency::decode(b, &mut 0))
        .collect::<Result<_, String>>()
        .ok()?;
    Some(Topology::DistGraph { weighted, members })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of topology (and none) reads back as written, one after another.
    #[test]
    fn descriptions_read_back_as_written() {
        let ring = |r: c_int| Adjacency {
            sources: vec![(r + 3) % 4, (r + 1) % 4],
            source_weights: vec![2, 3],
            destinations: vec![(r + 3) % 4, (r + 1) % 4],
            destination_weights: vec![2, 3],
        };
        let all = [
            None,
            Some(Topology::Cart {
                dims: vec![2, 2],
                periods: vec![1, 0],
            }),
            Some(Topology::Graph {
                index: vec![2, 4, 6, 8],
                edges: vec![3, 1, 0, 2, 1, 3, 2, 0],
            }),
            Some(Topology::DistGraph {
                weighted: true,
                members: (0..4).map(ring).collect(),
            }),
            Some(Topology::DistGraph {
                weighted: false,
                members: vec![Adjacency::default()],
            }),
        ];
        let mut out = Vec::new();
        for t in &all {
            Topology::encode(t.as_ref(), &mut out);
        }
        let at = &mut 0;
        for t in &all {
            assert!(Topology::decode(&out, at).expect("well formed") == *t);
        }
        assert_eq!(*at, out.len());
        assert!(Topology::decode(&[9], &mut 0).is_err(), "an unknown kind");
        let mut one = Vec::new();
        Topology::encode(all[1].as_ref(), &mut one);
        assert!(
            Topology::decode(&one[..one.len() - 1], &mut 0).is_err(),
            "cut short"
        );
    }
}
