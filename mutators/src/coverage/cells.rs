//! The input family's shape cells: a tensor's rank class and shape class.
use mutagraph_ir::types::TensorType;

/// Number of shape cells per (op, input port, dtype).
pub const SHAPE_CELLS: usize = 1 + 5 * 3;

/// Shape class of an input of rank ≥ 1 (rank 0 is [`ShapeClass::Scalar`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeClass {
    /// Rank 0.
    Scalar,
    /// Some dimension is 0.
    ZeroSized,
    /// No dimension is 0, some is 1.
    HasUnit,
    /// Every known dimension is at least 2.
    General,
}

impl ShapeClass {
    fn name(self) -> &'static str {
        match self {
            ShapeClass::Scalar => "scalar",
            ShapeClass::ZeroSized => "zero",
            ShapeClass::HasUnit => "unit",
            ShapeClass::General => "general",
        }
    }
}

/// The shape cell (`0..SHAPE_CELLS`) of a tensor type, if its rank is known.
pub fn shape_cell(t: &TensorType) -> Option<usize> {
    let (rank, class) = shape_class(t)?;
    Some(match class {
        ShapeClass::Scalar => 0,
        c => {
            let k = match c {
                ShapeClass::ZeroSized => 0,
                ShapeClass::HasUnit => 1,
                _ => 2,
            };
            1 + (rank.min(5) - 1) * 3 + k
        }
    })
}

/// Rank and shape class of a tensor type, if its rank is known.
pub fn shape_class(t: &TensorType) -> Option<(usize, ShapeClass)> {
    let shape = t.shape.as_ref()?;
    if shape.is_empty() {
        return Some((0, ShapeClass::Scalar));
    }
    let class = if shape.iter().any(|d| d.value() == Some(0)) {
        ShapeClass::ZeroSized
    } else if shape.iter().any(|d| d.value() == Some(1)) {
        ShapeClass::HasUnit
    } else {
        ShapeClass::General
    };
    Some((shape.len(), class))
}

pub(super) fn cell_name(cell: usize) -> String {
    if cell == 0 {
        return "r0/scalar".into();
    }
    let rank = (cell - 1) / 3 + 1;
    let class = [
        ShapeClass::ZeroSized,
        ShapeClass::HasUnit,
        ShapeClass::General,
    ][(cell - 1) % 3];
    let r = if rank == 5 {
        "r5+".to_string()
    } else {
        format!("r{rank}")
    };
    format!("{r}/{}", class.name())
}
