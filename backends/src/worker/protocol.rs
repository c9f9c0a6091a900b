//! The framed binary protocol between the engine and its worker processes.
//!
//! A frame is a little-endian `u32` payload length followed by the payload, a `postcard`
//! encoding of [`Request`] (engine → worker, on the worker's stdin) or [`Response`]
//! (worker → engine, on the worker's original stdout). The worker moves its own stdout to
//! stderr at start so that nothing a library prints can corrupt the stream.
use crate::backend::{BackendError, Capabilities};
use crate::value::NamedValues;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::path::PathBuf;

/// Largest frame accepted (1 GiB): a corrupt length never makes us allocate without bound.
pub const MAX_FRAME: u32 = 1 << 30;

/// Settings sent to a worker when it starts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WireConfig {
    /// ONNX Runtime library path.
    pub ort_dylib: Option<PathBuf>,
    /// Intra-op threads.
    pub threads: Option<usize>,
    /// Scheduling niceness the worker takes when it starts (see [`super::lower_priority`]);
    /// 0 leaves it as it is.
    #[serde(default)]
    pub nice: i32,
    /// Which of its rewrites the library applies.
    #[serde(default)]
    pub rewrites: crate::catalog::Rewrites,
    /// See [`crate::catalog::Config::typed_only`].
    #[serde(default)]
    pub typed_only: bool,
}

/// Engine → worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Request {
    /// Create the backend (first message).
    Init {
        /// Backend name from the catalog.
        backend: String,
        /// Settings.
        config: WireConfig,
    },
    /// Prepare `model` (unless it is the one prepared last) and run it on `inputs`.
    Run {
        /// The model's ONNX bytes (as one byte string: as a sequence of `u8` each byte went
        /// through serde on its own, 23 % of a real-model campaign's CPU).
        #[serde(with = "serde_bytes")]
        model: Vec<u8>,
        /// Graph inputs.
        inputs: NamedValues,
    },
    /// Report the backend's capabilities.
    Capabilities,
    /// Exit cleanly.
    Shutdown,
}

/// Writes the frame of `Request::Run { model, inputs }` from borrowed data, the model's bytes
/// straight from `model` (a real model's megabytes were copied into every frame first), byte for
/// byte the frame of [`write_frame`] with that request.
pub fn write_run(w: &mut impl Write, model: &[u8], inputs: &NamedValues) -> io::Result<()> {
    // postcard writes the variant index and the byte string's length as varints, then the bytes.
    let mut head = postcard::to_stdvec(&1u32).map_err(io::Error::other)?;
    head.extend(postcard::to_stdvec(&(model.len() as u64)).map_err(io::Error::other)?);
    let tail = postcard::to_stdvec(inputs).map_err(io::Error::other)?;
    let total = head.len() + model.len() + tail.len();
    let len = u32::try_from(total)
        .ok()
        .filter(|&l| l <= MAX_FRAME)
        .ok_or_else(|| io::Error::other(format!("frame of {total} bytes is too large")))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&head)?;
    w.write_all(model)?;
    w.write_all(&tail)?;
    w.flush()
}

/// What a run produced inside the worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum RunResult {
    /// Outputs.
    Ok(NamedValues),
    /// The backend refused or failed.
    Err(BackendError),
    /// The backend panicked (caught); the message and location.
    Panic(String),
}

/// Worker → engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Response {
    /// The backend was created.
    Ready {
        /// Its name.
        name: String,
        /// Its version.
        version: String,
    },
    /// The backend could not be created.
    InitFailed(String),
    /// The result of a `Run`.
    Ran {
        /// What happened.
        result: RunResult,
        /// Time spent in `prepare` (0 when the model was cached), nanoseconds.
        prepare_ns: u64,
        /// Time spent in `run`, nanoseconds.
        run_ns: u64,
        /// Peak resident memory of the worker during the request, bytes (0 if unknown).
        peak_rss: u64,
        /// True when the prepared model of an earlier request was reused.
        cached: bool,
        /// The rewrites that changed the model while it was prepared, in order, as the library
        /// names them (recorded when the worker's rewrites are not [`All`], and for ONNX
        /// Runtime's optimized sessions).
        ///
        /// [`All`]: crate::catalog::Rewrites::All
        rewrites: Vec<String>,
    },
    /// The answer to `Capabilities`.
    Capabilities(Capabilities),
}

/// Writes one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, msg: &T) -> io::Result<()> {
    let bytes = postcard::to_stdvec(msg).map_err(io::Error::other)?;
    let len = u32::try_from(bytes.len())
        .ok()
        .filter(|&l| l <= MAX_FRAME)
        .ok_or_else(|| io::Error::other(format!("frame of {} bytes is too large", bytes.len())))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&bytes)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` on a clean end of stream before the frame.
pub fn read_frame<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = r.read(&mut len[got..])?;
        if n == 0 {
            if got == 0 {
                return Ok(None);
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "truncated frame header",
            ));
        }
        got += n;
    }
    let len = u32::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame length {len} exceeds the limit"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    postcard::from_bytes(&buf)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Data, HostTensor, Value};

    #[test]
    fn a_run_written_from_borrowed_data_is_the_frame_of_the_request() {
        let inputs: NamedValues = vec![(
            "x".into(),
            Value::Tensor(HostTensor::new(vec![2], Data::F32(vec![1.5, -2.0]))),
        )];
        // Lengths whose varints take one, two and three bytes.
        for n in [0usize, 5, 300, 70_000] {
            let model: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            let mut direct = Vec::new();
            write_run(&mut direct, &model, &inputs).unwrap();
            let mut framed = Vec::new();
            let req = Request::Run {
                model: model.clone(),
                inputs: inputs.clone(),
            };
            write_frame(&mut framed, &req).unwrap();
            assert_eq!(direct, framed, "model of {n} bytes");
        }
    }

    #[test]
    fn frames_round_trip() {
        let req = Request::Run {
            model: vec![1, 2, 3],
            inputs: vec![(
                "x".into(),
                Value::Tensor(HostTensor::new(vec![2], Data::F32(vec![1.5, f32::NAN]))),
            )],
        };
        let mut buf = Vec::new();
        write_frame(&mut buf, &req).unwrap();
        write_frame(&mut buf, &Request::Shutdown).unwrap();
        let mut r = &buf[..];
        let Some(Request::Run { model, inputs }) = read_frame(&mut r).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(model, vec![1, 2, 3]);
        let t = inputs[0].1.tensor().unwrap();
        let Data::F32(v) = &t.data else { panic!() };
        assert!(v[1].is_nan());
        assert!(matches!(
            read_frame(&mut r).unwrap(),
            Some(Request::Shutdown)
        ));
        assert!(read_frame::<Request>(&mut r).unwrap().is_none());
    }

    #[test]
    fn every_element_type_round_trips() {
        use half::{bf16, f16};
        let all = vec![
            Data::F32(vec![1.5, -0.0, f32::INFINITY]),
            Data::F64(vec![1e300, -2.5, f64::MIN_POSITIVE]),
            Data::F16(vec![
                f16::from_f32(0.5),
                f16::NEG_INFINITY,
                f16::from_f32(-3.0),
            ]),
            Data::BF16(vec![bf16::from_f32(2.0), bf16::from_f32(-1e30), bf16::ZERO]),
            Data::I8(vec![-128, 0, 127]),
            Data::I16(vec![-32768, 1, 32767]),
            Data::I32(vec![i32::MIN, 2, i32::MAX]),
            Data::I64(vec![i64::MIN, 3, i64::MAX]),
            Data::U8(vec![0, 128, 255]),
            Data::U16(vec![0, 1, u16::MAX]),
            Data::U32(vec![0, 7, u32::MAX]),
            Data::U64(vec![0, 9, u64::MAX]),
            Data::Bool(vec![true, false, true]),
            Data::String(vec![b"a".to_vec(), vec![], vec![0xff, 0]]),
        ];
        for d in all {
            let v = Value::Tensor(HostTensor::new(vec![3], d));
            let inputs = vec![("x".to_string(), v.clone())];
            let mut buf = Vec::new();
            write_frame(
                &mut buf,
                &Request::Run {
                    model: vec![],
                    inputs,
                },
            )
            .unwrap();
            let Some(Request::Run { inputs, .. }) = read_frame(&mut &buf[..]).unwrap() else {
                panic!("not a run")
            };
            assert_eq!(inputs[0].1, v);
        }
    }

    #[test]
    fn borrowed_run_is_encoded_like_the_owned_one() {
        let inputs = vec![(
            "x".to_string(),
            Value::Tensor(HostTensor::new(vec![2], Data::I64(vec![-1, 7]))),
        )];
        let mut owned = Vec::new();
        write_frame(
            &mut owned,
            &Request::Run {
                model: vec![9, 8, 7],
                inputs: inputs.clone(),
            },
        )
        .unwrap();
        let mut borrowed = Vec::new();
        write_run(&mut borrowed, &[9, 8, 7], &inputs).unwrap();
        assert_eq!(owned, borrowed);
    }

    #[test]
    fn corrupt_frames_are_errors() {
        let mut r = &[0xff, 0xff, 0xff, 0xff][..];
        assert!(read_frame::<Request>(&mut r).is_err());
        let mut r = &[5, 0, 0, 0, 1][..];
        assert!(read_frame::<Request>(&mut r).is_err());
        let mut r = &[2, 0][..];
        assert!(read_frame::<Request>(&mut r).is_err());
    }
}
